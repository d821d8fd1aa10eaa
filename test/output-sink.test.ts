/**
 * The one output sink (src/cli/output.ts): a reader that goes away ends the
 * command quietly with exit 0 (as `perf script | head` does), for the async
 * writers (dump, script) and the synchronous one (decode); a file output
 * appears whole, and not at all after a failure; stdout redirected to a file
 * (written in place) carries the same bytes as a pipe.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { withOutput } from '../src/cli/output.js';
import { repoRoot } from './cli.js';
import { needTool } from './require-tool.js';

const dir = mkdtempSync(join(tmpdir(), 'perfpoke-output-sink-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const main = join(repoRoot, 'src', 'cli', 'main.ts');

/** `perfpoke ARGS | head -c 100` through a shell: exit status and stderr of perfpoke. */
function intoHead(args: string[]): { status: number; stderr: string; bytes: number } {
  const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
  const cmd =
    `${q(process.execPath)} --import tsx ${q(main)} ${args.map(q).join(' ')} ` +
    `2>${q(join(dir, 'err'))} | head -c 100 | wc -c; exit \${PIPESTATUS[0]}`;
  const r = spawnSync('bash', ['-c', cmd], { cwd: repoRoot, encoding: 'utf8' });
  return { status: r.status ?? -1, stderr: readFileSync(join(dir, 'err'), 'utf8'), bytes: Number(r.stdout.trim()) };
}

test('a reader that goes away: exit 0, nothing on stderr (dump, script, decode)', () => {
  const sim = join(dir, 'sim');
  simulate({ out: sim, seed: 4, size: 200_000, truth: false });
  const big = join(repoRoot, 'test', 'fixtures', 'recorded', 'dwarf.data');
  for (const args of [
    ['dump', '--hex', '-i', big], // 115 KB: more than a pipe holds
    ['dump', '--hex', '-i', join(sim, 'data')],
    ['script', '--show-task-events', '--show-mmap-events', '-i', join(sim, 'data')],
    ['decode', '-i', sim, '--itrace=i0ns'],
  ]) {
    const r = intoHead(args);
    assert.equal(r.bytes, 100, `${args.join(' ')}: head read its 100 bytes`);
    assert.equal(r.stderr, '', args.join(' '));
    assert.equal(r.status, 0, args.join(' '));
  }
});

test('a file output appears whole at close, and not at all after a failure', async () => {
  const f = join(dir, 'out.txt');
  await withOutput(f, (out) => {
    for (let i = 0; i < 20_000; i++) out.line(`line ${i}`);
    assert.equal(existsSync(f), false, 'nothing under the final name while writing');
  });
  const text = readFileSync(f, 'utf8');
  assert.equal(text.split('\n').length, 20_001);
  assert.ok(text.endsWith('line 19999\n'));
  const g = join(dir, 'failed.txt');
  await assert.rejects(
    withOutput(g, (out) => {
      out.line('half');
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(existsSync(g), false);
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.includes('.tmp-')),
    [],
    'no temp file left',
  );
});

test('stdout redirected to a file is written in place: the same bytes as through a pipe, and as perf', (t) => {
  if (!needTool(t, 'perf')) return;
  // a live recording with callchains: several 64 KiB chunks of output (the fixtures print less than one)
  const input = join(dir, 'live.data');
  const rec = spawnSync(
    '/usr/bin/perf',
    ['record', '-q', '-g', '-e', 'cpu-clock', '-c', '20000', '-o', input, '--', 'find', '/usr/lib', '-name', '*.so*'],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  assert.equal(rec.status, 0, rec.stderr);
  const file = join(dir, 'script.txt');
  const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
  const toFile = spawnSync(
    'bash',
    ['-c', `${q(process.execPath)} --import tsx ${q(main)} script -i ${q(input)} > ${q(file)}`],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  assert.equal(toFile.status, 0, toFile.stderr);
  const piped = spawnSync(process.execPath, ['--import', 'tsx', main, 'script', '-i', input], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  assert.equal(piped.status, 0, piped.stderr);
  const written = readFileSync(file, 'utf8');
  assert.ok(written.length > 100_000, `a few chunks of output (${written.length} bytes)`);
  assert.equal(written, piped.stdout);
  const perf = spawnSync('/usr/bin/perf', ['script', '-i', input], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(written, perf.stdout);
});
