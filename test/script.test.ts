/**
 * `perfpoke script` against perf 6.1's `perf script` on every recorded
 * fixture: same field list and flags, output compared line by line (or, when
 * perf refuses a field list, the same error text).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli, runPerf } from './cli.js';
import { parseFields, runScript, StringSink, type ScriptOptions } from '../src/cli/commands/script.js';
import { cannotCompare } from './require-tool.js';

const dir = join(repoRoot, 'test', 'fixtures', 'recorded');
const fixtures = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.data'))
      .sort()
  : [];
// made by our own encoders (this kernel withholds TEXT_POKE): both byte orders
for (const f of ['synthetic/text-poke.data', 'synthetic/text-poke-be.data'])
  if (existsSync(join(dir, f))) fixtures.push(f);
const havePerf = runPerf(['--version']) !== null;

/** Documented exceptions (docs/script-stats.md). */
const SKIP: Record<string, string> = {
  // perf cannot read its own pipe-mode file with tracing data from a regular file ("unexpected end of event stream")
  'pipe-tp.data': 'perf 6.1 fails on this file itself',
};

const SHOW_ALL = [
  '--show-task-events',
  '--show-mmap-events',
  '--show-switch-events',
  '--show-bpf-events',
  '--show-lost-events',
  '--show-namespace-events',
  '--show-cgroup-events',
  '--show-text-poke-events',
];

const CASES: { args: string[]; note?: string; noDwarf?: boolean }[] = [
  { args: ['-F', 'comm,tid,pid,cpu,time,period,event,ip,addr'], noDwarf: true },
  { args: ['-F', 'comm,tid,pid,time,period,event,ip'], noDwarf: true },
  { args: ['-F', 'comm,tid,pid,cpu,time,event', ...SHOW_ALL] },
  { args: ['-F', 'tid,time,period,event', '--show-round-events', '--show-task-events'] },
];

function toOptions(args: string[]): ScriptOptions {
  const o: ScriptOptions = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-F') o.fields = parseFields(args[++i]!);
    else {
      const key = a.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof ScriptOptions;
      (o as Record<string, boolean>)[key] = true;
    }
  }
  return o;
}

async function ours(file: string, args: string[]): Promise<{ out: string; err?: string }> {
  const sink = new StringSink();
  try {
    await runScript(file, toOptions(args), sink);
    return { out: sink.text };
  } catch (e) {
    return { out: sink.text, err: (e as Error).message };
  }
}

function firstDiff(a: string[], b: string[]): string {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}:\n  ours: ${JSON.stringify(a[i])}\n  perf: ${JSON.stringify(b[i])}`;
  }
  return 'equal';
}

for (const fx of fixtures) {
  test(`script matches perf script: ${fx}`, async (t) => {
    if (!havePerf) return cannotCompare(t, 'perf is not installed');
    if (SKIP[fx]) return t.skip(SKIP[fx]!);
    const file = join(dir, fx);
    let nonEmpty = 0;
    for (const c of CASES) {
      // DWARF callchains: perf unwinds user stacks with libdw; we print no unwound frames
      if (c.noDwarf && fx.startsWith('dwarf')) continue;
      const perf = runPerf(['script', '-i', file, ...c.args])!;
      const mine = await ours(file, c.args);
      const label = `${fx} ${c.args.join(' ')}`;
      if (perf.status !== 0) {
        const perfErr = perf.stderr.split('\n')[0]!;
        assert.equal(mine.err, perfErr, `${label}: perf failed with "${perfErr}"`);
        continue;
      }
      assert.equal(mine.err, undefined, `${label}: we failed: ${mine.err}`);
      // perf 6.1 does not byte-swap MMAP2 prot/flags of big-endian files (it prints "---p"); we print
      // the recorded values, so only there the permission letters are left out of the comparison
      const norm = (l: string): string =>
        fx.endsWith('-be.data') && l.includes('PERF_RECORD_MMAP2') ? l.replace(/\]: [-r][-w][-x][ps] /, ']: ???? ') : l;
      // … and it swaps the wrong bytes as sample_id of a big-endian SWITCH record (no body): those lines are skipped
      const keep = (l: string): boolean => !(fx.endsWith('-be.data') && l.includes('PERF_RECORD_SWITCH '));
      const a = mine.out.split('\n').filter(keep).map(norm);
      const b = perf.stdout.split('\n').filter(keep).map(norm);
      if (b.length > 1) nonEmpty++;
      assert.equal(
        a.length,
        b.length,
        `${label}: ${a.length} lines vs perf's ${b.length}; first difference at ${firstDiff(a, b)}`,
      );
      assert.equal(firstDiff(a, b), 'equal', label);
    }
    assert.ok(nonEmpty > 0, `${fx}: perf printed nothing for any case, the test compares nothing`);
  });
}

test('script rejects fields it cannot print', () => {
  assert.throws(() => parseFields('comm,brstackinsn'), /not supported/);
  assert.throws(() => parseFields('comm,nosuch'), /Invalid field requested/);
  assert.throws(() => parseFields('sw:comm'), /per-type/);
});

/**
 * Genuine TEXT_POKE records (Linux 6.1 in qemu, test/fixtures/real-kernel):
 * `perf record --kcore` directories, read by perf with kcore_dir's kallsyms,
 * so TEXT_POKE lines carry "sym+0xoff" — ours come from src/machine's symbolizer.
 */
const realDir = join(repoRoot, 'test', 'fixtures', 'real-kernel');
for (const d of ['perf-alone', 'perf-kcore', 'perfpoke-kcore']) {
  test(`script --show-text-poke-events matches perf on real-kernel/${d}`, async (t) => {
    if (!havePerf) return cannotCompare(t, 'perf is not installed');
    if (!existsSync(join(realDir, d, 'data'))) return cannotCompare(t, `no fixture ${d}`);
    const args = [
      '-F',
      'comm,tid,pid,cpu,time,event',
      '--show-text-poke-events',
      '--show-task-events',
      '--show-mmap-events',
      '--show-bpf-events',
    ];
    const perf = runPerf(['script', '-i', join(realDir, d), ...args])!;
    assert.equal(perf.status, 0, perf.stderr);
    const mine = await ours(join(realDir, d), args);
    assert.equal(mine.err, undefined);
    const a = mine.out.split('\n');
    const b = perf.stdout.split('\n');
    assert.ok(
      b.some((l) => l.includes('PERF_RECORD_TEXT_POKE')),
      'the fixture has TEXT_POKE records',
    );
    if (d === 'perf-kcore') {
      // Linux 6.1 inflated most TEXT_POKE/KSYMBOL records of this file (perfpoke recorded at the same
      // time): perf reads their sample_id from the record's end, prints time 0 and delivers them first;
      // script does the same (src/format/script-sample-id.ts, the session's perfTimes order)
      const zero = b.filter((l) => /\s0\.000000:/.test(l)).length;
      assert.ok(zero > 0, 'perf shows inflated records at time 0');
      t.diagnostic(`perf prints ${zero} lines at time 0, and so does perfpoke`);
    }
    // perfpoke-kcore (kcore_dir/modules empty) takes perf's kallsyms-only path and perf-alone the kcore
    // path (src/machine/kernel-symbols.ts): both equal perf, trampoline and kprobe-page pokes included
    assert.equal(firstDiff(a, b), 'equal');
  });
}

test('script reads a pipe on stdin and prints --json lines, one per perf line', (t) => {
  if (!havePerf) return cannotCompare(t, 'perf is not installed');
  const pipe = join(dir, 'pipe.data');
  if (!existsSync(pipe)) return cannotCompare(t, 'no pipe.data fixture');
  const args = ['-F', 'comm,tid,time,period,event,ip', '--show-task-events'];
  const perf = runPerf(['script', '-i', pipe, ...args])!;
  const r = runCli(['script', '-i', '-', ...args, '--json'], { input: readFileSync(pipe) });
  assert.equal(r.status, 0, r.stderr);
  const objs = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; comm?: string; period?: string });
  const lines = perf.stdout.trim().split('\n');
  assert.equal(objs.length, lines.length);
  objs.forEach((o, i) => {
    assert.ok(lines[i]!.includes(o.comm!), `line ${i + 1}: ${lines[i]} vs ${JSON.stringify(o)}`);
    if (o.type === 'sample') assert.ok(lines[i]!.includes(` ${o.period} `), `line ${i + 1}`);
  });
});

test('the time column equals the exact BigInt form, also just below second boundaries', async () => {
  const { formatPerfTime: formatTime } = await import('../src/machine/time-format.js');
  const N = 1_000_000_000n;
  const exact = (t: bigint): string => `${t / N}.${((t % N) / 1000n).toString().padStart(6, '0')}`;
  const samples = [0n, 999n, 1000n, N - 1n, N, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 64n - 1n];
  for (let k = 9_007_199n; k > 9_006_000n; k--) samples.push(k * N - 1n, k * N - 1000n, k * N);
  for (const t of samples) assert.equal(formatTime(t), exact(t), String(t));
});
