/**
 * The library as a dependency sees it: `import … from 'perfpoke'` resolves
 * through package.json's `exports` to the built dist/ (a package may import
 * itself by name), not to ../src. dist/ is built by `npm ci` (prepare); when it
 * is older than src/ the test rebuilds it first.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runPerf } from './cli.js';
import { cannotCompare } from './require-tool.js';

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? statSync(p).mtimeMs : 0);
  }
  return t;
}

before(() => {
  const built = join(repoRoot, 'dist', 'index.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newest(join(repoRoot, 'src'))) return;
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, `npm run build: ${r.stdout}${r.stderr}`);
});

test("import from 'perfpoke' (the built package) reads a shipped file: perf's sample count", async (t) => {
  const { openPerfData, RecordType, FormatError } = await import('perfpoke');
  const resolved = import.meta.resolve('perfpoke');
  assert.match(resolved, /\/dist\/index\.js$/, 'resolved through exports to the built package');
  assert.equal(typeof FormatError, 'function');
  const path = join(repoRoot, 'test', 'fixtures', 'recorded', 'sw.data');
  const f = await openPerfData(path);
  let n = 0;
  let samples = 0;
  try {
    for await (const r of f.records()) {
      n++;
      if (r.type === RecordType.SAMPLE) samples++;
    }
  } finally {
    await f.close();
  }
  assert.ok(n > 0 && samples > 0);
  const perf = runPerf(['report', '--stats', '-i', path]);
  if (!perf) return cannotCompare(t, 'perf 6.1 not installed: counted, not compared');
  const m = /SAMPLE events:\s+(\d+)/.exec(perf.stdout);
  assert.ok(m, perf.stdout);
  assert.equal(samples, Number(m[1]));
});
