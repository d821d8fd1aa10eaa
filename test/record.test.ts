/**
 * `perfpoke record` end to end: what it records, checked through perf 6.1
 * (perf script -D, report --stats/--header-only, script --show-*-events must
 * read our files without a warning and count what we say we wrote), and
 * compared with `perf record` of the same action on this machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot, runCli, runPerf } from './cli.js';
import { buildBpfLoad, cannotRecord, perfMissing, perfStats, scratch } from './record-helpers.js';

const skipReason = (): string | null => perfMissing() ?? cannotRecord();

/** stderr of perf must hold no warning at all (perf prints them there). */
function assertPerfQuiet(args: string[]): string {
  const r = runPerf(args)!;
  assert.equal(r.status, 0, `perf ${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stderr.trim(), '', `perf ${args.join(' ')} warned`);
  return r.stdout;
}

function jsonOf(stdout: string): {
  records: number;
  lost: number;
  lostRecords: number;
  rounds: number;
  synthesized: number;
  synthesizedTypes: Record<string, number>;
  types: Record<string, number>;
  fileBytes: number;
} {
  return JSON.parse(stdout.slice(stdout.indexOf('\n{') + 1 || stdout.indexOf('{')));
}

/** perf script --show-bpf-events lines of one comm, normalised to what must match between two runs. */
function bpfLines(file: string, comm: string): string[] {
  const out = assertPerfQuiet(['script', '--show-bpf-events', '--show-task-events', '-i', file]);
  const lines: string[] = [];
  for (const l of out.split('\n')) {
    if (!l.trimStart().startsWith(comm)) continue;
    const k = /PERF_RECORD_KSYMBOL addr [0-9a-f]+ len (\d+) type (\d+) flags (0x[0-9a-f]+) name (\S+)/.exec(l);
    if (k) lines.push(`KSYMBOL len ${k[1]} type ${k[2]} flags ${k[3]} name ${k[4]}`);
    const b = /PERF_RECORD_BPF_EVENT type (\d+), flags (\d+), id (\d+)/.exec(l);
    if (b) lines.push(`BPF_EVENT type ${b[1]} flags ${b[2]}`);
  }
  return lines.sort();
}

test('record: usage errors exit 2 without touching the output', () => {
  const dir = scratch('usage');
  const r = runCli(['record', '-o', join(dir, 'x.data')]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /-a|command/);
  assert.equal(existsSync(join(dir, 'x.data')), false);
  const m = runCli(['record', '-a', '-m', '3', '-o', join(dir, 'y.data'), '--', 'true']);
  assert.equal(m.status, 2);
  assert.match(m.stderr, /power of two/);
});

test('record: without the addon it says what is missing, and other commands still work', () => {
  const dir = scratch('noaddon');
  const env = { ...process.env, PERFPOKE_RECORD_ADDON: join(dir, 'nothing-here.node') };
  const main = join(repoRoot, 'src', 'cli', 'main.ts');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', main, 'record', '-a', '-o', join(dir, 'x.data'), '--', 'true'],
    { cwd: repoRoot, env, encoding: 'utf8' },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /needs the native addon .*nothing-here\.node.*npm rebuild/);
  assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  assert.equal(existsSync(join(dir, 'x.data')), false);
  const h = spawnSync(process.execPath, ['--import', 'tsx', main, '--help'], { cwd: repoRoot, env, encoding: 'utf8' });
  assert.equal(h.status, 0, h.stderr);
});

test('record --kcore without /proc/kcore: one line, exit 2, no directory', (t) => {
  if (existsSync('/proc/kcore')) return t.skip('/proc/kcore exists here; the missing-kcore path cannot be shown');
  const dir = scratch('kcore');
  const out = join(dir, 'kc.data');
  const r = runCli(['record', '-a', '--kcore', '-o', out, '--', 'true']);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /\/proc\/kcore does not exist/);
  assert.equal(existsSync(out), false);
  assert.deepEqual(readdirSync(dir), []);
});

test('record: BPF program load/unload gives the same KSYMBOL and BPF_EVENT records as perf record', (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const bin = buildBpfLoad();
  if (!bin) return t.skip('gcc cannot build tools/bpf-load here');
  const dir = scratch('bpf');
  const ours = join(dir, 'ours.data');
  const theirs = join(dir, 'perf.data');
  const r = runCli(['record', '-a', '-o', ours, '--json', '--', bin, '2']);
  if (r.status !== 0 && /BPF_PROG_LOAD/.test(r.stdout + r.stderr))
    return t.skip(`bpf(2) refused here: ${r.stderr.trim()}`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /\[ perfpoke record: Captured and wrote [\d.]+ MB .*ours\.data \(\d+ records, \d+ lost\) \]/);
  const tags = [...r.stdout.matchAll(/^tag ([0-9a-f]{16}) id (\d+)$/gm)];
  assert.equal(tags.length, 2, r.stdout);
  const p = runPerf(['record', '-a', '-e', 'dummy', '-o', theirs, '--', bin, '2'])!;
  assert.equal(p.status, 0, p.stderr);

  const mine = bpfLines(ours, 'bpf-load');
  const perfs = bpfLines(theirs, 'bpf-load');
  const name = `bpf_prog_${tags[0]![1]}_perfpoke_load`;
  // 2 loads + 2 unloads, each a KSYMBOL (type 1 = BPF; flags 0x1 = unregister) and a BPF_EVENT (1 load, 2 unload)
  assert.equal(mine.filter((l) => l.startsWith('KSYMBOL') && l.endsWith(`name ${name}`)).length, 4, mine.join('\n'));
  assert.equal(mine.filter((l) => l === 'BPF_EVENT type 1 flags 0').length, 2);
  assert.equal(mine.filter((l) => l === 'BPF_EVENT type 2 flags 0').length, 2);
  assert.deepEqual(mine, perfs, 'same records as perf record -e dummy');

  // the prog ids in our BPF_EVENT records are the ones bpf(2) returned
  const dump = assertPerfQuiet(['script', '--show-bpf-events', '-i', ours]);
  for (const [, , id] of tags) assert.match(dump, new RegExp(`PERF_RECORD_BPF_EVENT type 1, flags 0, id ${id}\\b`));

  // perf's counts of our file are the counts we reported
  const j = jsonOf(r.stdout);
  const st = perfStats(ours);
  assert.equal(st.stderr.trim(), '');
  const expect: Record<string, number> = { ...j.types };
  for (const [k, n] of Object.entries(j.synthesizedTypes)) if (n > 0) expect[k] = (expect[k] ?? 0) + n;
  expect.FINISHED_ROUND = j.rounds;
  assert.deepEqual(st.counts, expect);
  assert.equal(j.lost, 0);
});

test('record: perf 6.1 reads the file without warnings (-D, --stats, --header-only, task events)', (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const dir = scratch('quiet');
  const f = join(dir, 'q.data');
  const r = runCli(['record', '-a', '-o', f, '--', 'sh', '-c', 'ls / >/dev/null; sleep 0.2']);
  assert.equal(r.status, 0, r.stderr);
  const d = assertPerfQuiet(['script', '-D', '-i', f]);
  assert.match(d, /PERF_RECORD_MMAP -1\/0: \[0x[0-9a-f]+\(0x[0-9a-f]+\) @ 0x[0-9a-f]+\]: x \[kernel\.kallsyms\]_text/);
  assert.match(d, /PERF_RECORD_FINISHED_ROUND/);
  const h = assertPerfQuiet(['report', '--header-only', '-i', f]);
  assert.match(h, /# event : name = dummy, .*text_poke = 1/);
  assert.match(h, /ksymbol = 1, bpf_event = 1/);
  assert.match(h, /# nrcpus online : \d+/);
  assert.match(h, /# cmdline : perfpoke record -a -o /);
  const tasks = assertPerfQuiet(['script', '--show-task-events', '--show-mmap-events', '-i', f]);
  assert.match(tasks, /PERF_RECORD_COMM exec: ls:/);
  assert.match(tasks, /PERF_RECORD_EXIT/);
  assertPerfQuiet(['report', '--stats', '-i', f]);
  // kernel MMAP start/pgoff are _text, as perf's own synthesized one on this machine
  const p = runPerf(['record', '-a', '-e', 'dummy', '-o', join(dir, 'p.data'), '--', 'true'])!;
  assert.equal(p.status, 0, p.stderr);
  const km = (s: string): string | undefined =>
    /PERF_RECORD_MMAP -1\/0: (\[.*\]: x \[kernel\.kallsyms\]_text)/.exec(s)?.[1];
  assert.equal(km(d), km(assertPerfQuiet(['script', '-D', '-i', join(dir, 'p.data')])));
  // processes running before the start get FORK, COMM and executable MMAP2 records, as perf synthesizes them (pid 1 here)
  const pid1 = (file: string): string[] =>
    assertPerfQuiet(['script', '--show-task-events', '--show-mmap-events', '-i', file])
      .split('\n')
      .map(
        (l) =>
          /(PERF_RECORD_COMM: .*:1\/1|PERF_RECORD_MMAP2 1\/1: .*|PERF_RECORD_FORK\(1:1\):\(\d+:\d+\))$/.exec(l)?.[1],
      )
      .filter((l): l is string => l !== undefined && !l.includes('exec:'))
      .sort();
  const oursPid1 = pid1(f);
  assert.ok(
    oursPid1.some((l) => l.startsWith('PERF_RECORD_COMM')),
    oursPid1.join('\n'),
  );
  assert.deepEqual(oursPid1, pid1(join(dir, 'p.data')));
});

test('record -e cpu-clock -F 999: samples with IP/TID/TIME/CPU/PERIOD that perf resolves', (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const dir = scratch('samples');
  const f = join(dir, 's.data');
  const r = runCli([
    'record',
    '-a',
    '-e',
    'cpu-clock',
    '-F',
    '999',
    '-o',
    f,
    '--json',
    '--',
    'sh',
    '-c',
    'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done',
  ]);
  assert.equal(r.status, 0, r.stderr);
  const j = jsonOf(r.stdout);
  const st = perfStats(f);
  assert.equal(st.stderr.trim(), '');
  assert.ok((st.counts.SAMPLE ?? 0) > 50, `samples: ${JSON.stringify(st.counts)}`);
  assert.equal(st.counts.SAMPLE, j.types.SAMPLE);
  const s = assertPerfQuiet(['script', '-F', 'comm,tid,cpu,time,event,ip,period', '-i', f]);
  assert.match(s, /^\s*sh\s+\d+\s+\[\d+\]\s+[\d.]+:\s+\d+\s+cpu-clock:\s+[0-9a-f]+/m);
  assertPerfQuiet(['report', '--stdio', '--sort', 'comm', '-i', f]);
  // HEADER_SAMPLE_TIME holds the first and last sample time perf script shows
  const times = [...assertPerfQuiet(['script', '-F', 'time', '-i', f]).matchAll(/([\d.]+):/g)]
    .map((m) => m[1]!)
    .sort((a, b) => Number(a) - Number(b));
  const h = assertPerfQuiet(['report', '--header-only', '-i', f]);
  assert.equal(/# time of first sample : ([\d.]+)/.exec(h)?.[1], times[0]);
  assert.equal(/# time of last sample : ([\d.]+)/.exec(h)?.[1], times.at(-1));
});

test('record -m 1: the ring wraps every 4 KiB; records survive and LOST counts match perf', (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const dir = scratch('wrap');
  const f = join(dir, 'w.data');
  const r = runCli([
    'record',
    '-a',
    '-m',
    '1',
    '-e',
    'cpu-clock',
    '-F',
    '10000',
    '-o',
    f,
    '--json',
    '--',
    'sh',
    '-c',
    'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done',
  ]);
  assert.equal(r.status, 0, r.stderr);
  const j = jsonOf(r.stdout);
  assert.ok(j.fileBytes > 3 * 4096, 'wrote more than the ring holds');
  // perf's only allowed warning is the one about the loss itself, with our count
  const dr = runPerf(['script', '-D', '-i', f])!;
  assert.equal(dr.status, 0, dr.stderr);
  const warn = /Warning:\s*Processed \d+ events and lost (\d+) chunks!\s*Check IO\/CPU overload!/.exec(dr.stderr);
  assert.equal(dr.stderr.replace(warn?.[0] ?? '', '').trim(), '', dr.stderr);
  assert.equal(Number(warn?.[1] ?? 0), j.lostRecords);
  const d = dr.stdout;
  const lostSum = [...d.matchAll(/PERF_RECORD_LOST: id:\d+: lost:(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0);
  const st = perfStats(f);
  assert.equal(st.counts.LOST ?? 0, j.lostRecords);
  assert.equal(lostSum, j.lost);
  t.diagnostic(`records ${j.records}, lost ${j.lost} in ${j.lostRecords} LOST records`);
});

test('record -a until SIGINT: the file is finished and no temporary file is left', async (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const dir = scratch('sigint');
  const f = join(dir, 'i.data');
  const c = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), 'record', '-a', '-o', f],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  c.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((res) => c.on('exit', (code) => res(code)));
  // wait until the temporary output exists (events are open), then interrupt
  // (generous: a loaded CI machine can take seconds just to start tsx)
  for (let i = 0; i < 600 && !readdirSync(dir).some((n) => n.includes('.tmp-')); i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.ok(
    readdirSync(dir).some((n) => n.includes('.tmp-')),
    `recording never started: ${stderr}`,
  );
  await new Promise((r) => setTimeout(r, 300));
  c.kill('SIGINT');
  assert.equal(await exited, 0, stderr);
  assert.match(stderr, /Captured and wrote/);
  assert.deepEqual(readdirSync(dir), ['i.data']);
  assertPerfQuiet(['report', '--stats', '-i', f]);
  rmSync(dir, { recursive: true, force: true });
});

test('record: the workload exit status becomes ours and the previous output is kept as .old (as perf)', (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  const dir = scratch('status');
  const f = join(dir, 'st.data');
  const a = runCli(['record', '-a', '--no-switch-events', '-o', f, '--', 'true']);
  assert.equal(a.status, 0, a.stderr);
  const b = runCli(['record', '-a', '--no-switch-events', '-o', f, '--', 'sh', '-c', 'exit 3']);
  assert.equal(b.status, 3, b.stderr);
  assert.match(b.stderr, /the command exited with 3/);
  assert.deepEqual(readdirSync(dir).sort(), ['st.data', 'st.data.old']);
  assertPerfQuiet(['report', '--stats', '-i', f]);
  assertPerfQuiet(['report', '--stats', '-i', `${f}.old`]);
  const h = assertPerfQuiet(['report', '--header-only', '-i', f]);
  assert.doesNotMatch(h, /context_switch/, '--no-switch-events');
});
