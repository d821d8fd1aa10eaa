/**
 * The project's size rules (README "Layers"), held by a test so they stay true:
 * no source line over 120 characters, no src module over 500 lines, CLI command
 * files of at most 150 lines (options, inputs, a library call, output), and no
 * pointer to documents or machine paths outside the repository.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** Files git tracks below `dirs` whose names end in one of `exts`. */
function tracked(dirs: string[], exts: string[]): string[] {
  const r = spawnSync('git', ['ls-files', '-z', '--', ...dirs], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ls-files failed: ${r.stderr}`);
  return r.stdout.split('\0').filter((f) => f !== '' && exts.some((e) => f.endsWith(e)));
}

const SOURCE_DIRS = ['src', 'test', 'bench', 'scripts', 'tools', 'bin'];
const lines = (file: string): string[] => readFileSync(join(repoRoot, file), 'utf8').split('\n');

test('no tracked source line is over 120 characters', () => {
  const files = tracked(SOURCE_DIRS, ['.ts', '.mjs', '.js']);
  assert.ok(files.length > 100, `the check saw the sources (${files.length} files)`);
  const long: string[] = [];
  for (const f of files)
    lines(f).forEach((l, i) => {
      const n = [...l].length;
      if (n > 120) long.push(`${f}:${i + 1}: ${n} characters`);
    });
  assert.deepEqual(long, []);
});

test('no src module over 500 lines; CLI command files at most 150', () => {
  const big: string[] = [];
  for (const f of tracked(['src'], ['.ts'])) {
    if (f.endsWith('.test.ts')) continue;
    const n = lines(f).length - 1;
    const limit = f.startsWith('src/cli/commands/') ? 150 : 500;
    if (n > limit) big.push(`${f}: ${n} lines (limit ${limit})`);
  }
  assert.deepEqual(big, []);
});

test('nothing points at documents or machine paths outside the repository', () => {
  // spelled in pieces so this file does not match itself
  const outside = [`..${'/'}shared`, `/${'work'}/`, `notes ${'item'}`, `DESIGN${'.md'}`];
  const text = ['.ts', '.mjs', '.js', '.md', '.sh', '.c', '.cc', '.h', '.py', '.json', '.gyp'];
  // .ci/run is left out: it is the machine's own setup, and may name where the machine keeps
  // tools no registry serves (libipt 2.3's ptdump/ptxed, passed to the tests as LIBIPT23_BIN)
  const files = tracked([...SOURCE_DIRS, 'docs', 'README.md', 'package.json'], text);
  assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/')), 'the check saw README and docs');
  const hits: string[] = [];
  for (const f of files)
    lines(f).forEach((l, i) => {
      for (const o of outside) if (l.includes(o)) hits.push(`${f}:${i + 1}: ${o}`);
    });
  assert.deepEqual(hits, []);
});
