import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from './cli.js';
import { sourceModules as sources } from './src-modules.js';

/** Relative imports and re-exports of a module, type-only ones included, as resolved .ts paths. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom '(\.[^']+)'/gms)) {
    const p = join(dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    if (existsSync(p)) out.push(p);
  }
  return out;
}

/** One cycle per strongly connected component of more than one module (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) found.push(scc.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the cycle finder sees a circle of two modules', () => {
  const g = new Map([
    ['a', ['b']],
    ['b', ['a']],
    ['c', ['a']],
  ]);
  assert.deepEqual(cycles(g), [['a', 'b']]);
});

test('no import circle between src modules, type-only imports included', () => {
  const src = join(repoRoot, 'src');
  const graph = new Map<string, string[]>();
  for (const f of sources(src)) graph.set(f, importsOf(f));
  const edges = [...graph.values()].reduce((n, e) => n + e.length, 0);
  assert.ok(edges > 300, `the scan found the imports (${edges})`);
  assert.deepEqual(
    cycles(graph).map((c) => c.map((f) => relative(src, f))),
    [],
  );
});
