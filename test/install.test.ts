/**
 * Install anywhere: a fresh copy of the tree installs with `npm ci` on a PATH
 * without any compiler (no gcc/g++/make/python3), the addon is simply not built,
 * `npx perfpoke stats` works, and `record` says in one line what is missing (exit 2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli } from './cli.js';
import { compilerFreePath, copyTree, HIDDEN_TOOLS } from './fresh-copy.js';
import { tempDir } from './temp-dir.js';

const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

test('npm ci of a fresh copy succeeds with the compilers hidden; stats works, record explains', (t) => {
  const root = tempDir('perfpoke-install-');
  const app = join(root, 'perfpoke');
  copyTree(app);
  const bin = compilerFreePath(join(root, 'bin'));
  const env = { ...process.env, PATH: bin };
  for (const tool of HIDDEN_TOOLS) {
    const w = spawnSync('sh', ['-c', `command -v ${tool}`], { env, encoding: 'utf8' });
    assert.notEqual(w.status, 0, `${tool} is still reachable: ${w.stdout}`);
  }
  const t0 = performance.now();
  const ci = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: app,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const seconds = (performance.now() - t0) / 1000;
  assert.equal(ci.status, 0, `npm ci failed without a compiler:\n${ci.stdout}\n${ci.stderr}`);
  t.diagnostic(`npm ci without a compiler: ${seconds.toFixed(1)} s`);
  assert.equal(existsSync(join(app, 'build', 'Release', 'perfpoke_record.node')), false, 'the addon was not built');
  assert.ok(existsSync(join(app, 'dist', 'cli', 'main.js')), 'prepare built dist/');

  const npx = (args: string[]) =>
    spawnSync('npx', ['--no-install', 'perfpoke', ...args], { cwd: app, env, encoding: 'utf8', maxBuffer: 1 << 26 });
  const v = npx(['--version']);
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout.trim(), version);

  const fixture = join('test', 'fixtures', 'recorded', 'sw.data');
  const s = npx(['stats', '-i', fixture]);
  assert.equal(s.status, 0, s.stderr);
  const fromSource = runCli(['stats', '-i', fixture]);
  assert.equal(fromSource.status, 0, fromSource.stderr);
  assert.equal(s.stdout, fromSource.stdout, 'the installed CLI prints what the source prints');
  assert.match(s.stdout, /SAMPLE events:\s+[1-9]/);

  const r = npx(['record', '-a', '-o', join(root, 'x.data'), '--', 'true']);
  assert.equal(r.status, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /^perfpoke: record needs the native addon .* not built: install g\+\+, make, python3 .*npm rebuild/,
  );
  assert.equal(existsSync(join(root, 'x.data')), false);
});
