/**
 * `perfpoke script` against perf 6.1's `perf script`, whole stdout byte for
 * byte (and stderr where perf warns), on kinds of recordings made live here:
 * event groups (`{a,b}`, leader sampling `:S` with PERF_SAMPLE_READ,
 * `--group`), context-switch records (`--switch-events`, per task and
 * system wide), BPF programs loaded and run during the recording and before it
 * (samples inside them named bpf_prog_<tag>_<name> from KSYMBOL records),
 * `perf stat record` files, pipe mode, and recordings that lost events or
 * are made out of order (perf's warnings on stderr). Workloads are ours
 * (dd, a shell that naps, tools/bpf-load/bpf-busy.c).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RecordType } from '../src/abi/record-type.js';
import { PerfFile } from '../src/perfdata/index.js';
import { repoRoot, runCli, runPerf } from './cli.js';
import { firstDiff, scriptInProcess } from './script-compare.js';
import { needTool, skipForKernel } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('perfpoke-script-files-');
const DD = ['dd', 'if=/dev/zero', 'of=/dev/null'];
const NAPS = ['sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.01; done'];
const BUSY = join(dir, 'bpf-busy');

const KEYS = ['grp', 'grpS', 'grpA', 'pgrp', 'sw', 'swa', 'bpf', 'bpfa', 'bpfpre', 'bpf2', 'pf'] as const;
const STAT_KEYS = ['st', 'stAI', 'stI', 'pst', 'lost', 'ooo'] as const;
type Key = (typeof KEYS)[number] | (typeof STAT_KEYS)[number];
const file = (k: Key): string => join(dir, `${k}.data`);
/** Why a recording could not be made (kernel or privileges): its cases skip, printing it. */
const failed = new Map<Key, string>();
let bpfBuild: string | null = null;
const loaders: ChildProcess[] = [];

function record(k: Key, args: string[], stat = false): void {
  const r = runPerf(stat ? ['stat', 'record', '-o', file(k), ...args] : ['record', '-q', '-o', file(k), ...args]);
  if (r?.status !== 0) failed.set(k, `perf ${stat ? 'stat ' : ''}record ${args.join(' ')}: ${r?.stderr.trim()}`);
}

/** Start bpf-busy with a delay, wait until its program is loaded: a recording started then finds it there. */
function loadedBusy(args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    const c = spawn(BUSY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    loaders.push(c);
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => {
      out += d;
      if (/ id \d+\n/.test(out)) resolve(null);
    });
    c.stderr.on('data', (d) => (err += d));
    c.on('exit', (code) => resolve(`bpf-busy exited ${code}: ${err.trim()}`));
  });
}

before(async () => {
  if (runPerf(['--version']) === null) return;
  record('grp', ['-e', '{cpu-clock,task-clock}', '-F', '999', '--', ...DD, 'count=200000']);
  record('grpS', ['-e', '{cpu-clock,task-clock,page-faults}:S', '-c', '200000', '-g', '--', ...DD, 'count=200000']);
  record('grpA', ['-e', '{cpu-clock,task-clock}:S', '--running-time', '-a', '-F', '999', '--', ...DD, 'count=100000']);
  record('sw', ['--switch-events', '-e', 'cpu-clock', '-F', '999', '--', ...NAPS]);
  record('swa', ['-a', '--switch-events', '-e', 'cpu-clock', '-F', '999', '--', ...NAPS]);
  const cc = spawnSync('gcc', ['-O2', '-o', BUSY, join(repoRoot, 'tools', 'bpf-load', 'bpf-busy.c')], {
    encoding: 'utf8',
  });
  bpfBuild = cc.error || cc.status !== 0 ? `gcc cannot build tools/bpf-load/bpf-busy.c: ${cc.stderr}` : null;
  if (bpfBuild === null) {
    const probe = spawnSync(BUSY, ['10', '1'], { encoding: 'utf8' });
    if (probe.status !== 0)
      for (const k of ['bpf', 'bpfa', 'bpfpre', 'bpf2'] as const) failed.set(k, probe.stderr.trim());
    else {
      record('bpf', ['-e', 'cpu-clock', '-F', '999', '--', BUSY, '20000', '20000']);
      // system-wide on a loaded machine: run the program long enough (~1 s) that its samples cannot all be missed
      record('bpfa', ['-a', '-g', '-e', 'cpu-clock', '-F', '999', '--', BUSY, '20000', '80000']);
      // loaded 700 ms before it runs: perf record synthesizes its KSYMBOL / BPF_EVENT at start
      const why = await loadedBusy(['20000', '30000', '700']);
      if (why) failed.set('bpfpre', why);
      else record('bpfpre', ['-a', '-e', 'cpu-clock', '-F', '999', '--', 'sleep', '1.2']);
      // another perf session listening meanwhile: the kernel gives one of them KSYMBOL / BPF_EVENT records
      // with header.size too large (the sample_id mid-record); perf reads time 0 there and delivers them first
      const other = spawn('/usr/bin/perf', ['record', '-q', '-o', join(dir, 'other.data'), '-a', '--', 'sleep', '2']);
      loaders.push(other);
      const ended = new Promise((resolve) => other.on('exit', resolve));
      await new Promise((resolve) => setTimeout(resolve, 500));
      record('bpf2', ['-e', 'cpu-clock', '-F', '999', '--', BUSY, '20000', '20000']);
      await ended;
    }
  }
  record('st', ['-e', 'cpu-clock,task-clock', '--', ...DD, 'count=100000'], true);
  record('stAI', ['-a', '-A', '-I', '100', '-e', 'cpu-clock,task-clock', '--', ...DD, 'count=200000'], true);
  record('stI', ['-I', '100', '--', ...DD, 'count=200000'], true);
  // one page of ring buffer at 50 kHz with callchains: the kernel drops records (LOST, LOST_SAMPLES)
  record('lost', ['-m', '1', '-e', 'cpu-clock', '-c', '20000', '-g', '--', ...DD, 'count=20000']);
  // a small ring buffer (8 KiB): perf wakes often, so the file has several rounds for the queue to flush
  record('ooo', ['-m', '2', '-e', 'cpu-clock', '-F', '999', '--', ...DD, 'count=300000']);
  // every page fault with its data address (-d): perf names the address's symbol, .bss variables included
  record('pf', ['-e', 'page-faults', '-d', '-c', '1', '--', 'sh', '-c', 'seq 1 50000 | sort > /dev/null']);
  if (!failed.has('ooo')) await outOfOrder(file('ooo'));
  // pipe mode (perf record -o -): the attrs, features and STAT records arrive as records
  const pipe = (k: Key, args: string[]): void => {
    const r = spawnSync('/usr/bin/perf', args, { maxBuffer: 1 << 30 });
    if (r.status === 0) writeFileSync(file(k), r.stdout);
    else failed.set(k, `perf ${args.join(' ')}: ${r.stderr?.toString().trim()}`);
  };
  pipe('pgrp', ['record', '-q', '-o', '-', '-e', '{cpu-clock,task-clock}:S', '-F', '999', '--', ...DD, 'count=100000']);
  pipe('pst', ['stat', 'record', '-o', '-', '-e', 'cpu-clock,task-clock', '--', ...DD, 'count=100000']);
});

/**
 * Make a recording's delivery out of order as a busy machine can: the time of a
 * sample late in the file is set to that of the first sample, older than what
 * the queue has already flushed (perf counts it and warns, then prints it at once).
 */
async function outOfOrder(path: string): Promise<void> {
  const f = await PerfFile.open(path);
  const samples: { at: number; time: bigint }[] = [];
  try {
    for await (const raw of f.records()) {
      const o = raw.layout?.sampleTimeOffset ?? -1;
      if (raw.type === RecordType.SAMPLE && o >= 0) samples.push({ at: raw.fileOffset + o, time: raw.timestamp()! });
    }
  } finally {
    await f.close();
  }
  const late = samples[Math.floor(samples.length * 0.8)];
  const first = samples[0];
  if (!late || !first) return void failed.set('ooo', 'the recording has no samples');
  const bytes = readFileSync(path);
  bytes.writeBigUInt64LE(first.time, late.at);
  writeFileSync(path, bytes);
}

after(() => {
  for (const l of loaders) l.kill('SIGKILL');
});

const SAMPLE = 'comm,tid,pid,cpu,time,period,event,ip';

/** [file, args, what perf's output must hold for the case to mean something] */
const CASES: [Key, string[], RegExp?][] = [
  ['grp', [], / task-clock: /],
  ['grp', ['--ns', '-F', '+pid']],
  ['grp', ['-F', 'comm,tid,time,period,event,ip,sym']],
  ['grp', ['-F', 'period,event', '--show-task-events']],
  ['grp', ['--header', '--pid', 'PID1']],
  ['grp', ['--time', '10%/2', '--show-mmap-events']],
  ['grpS', [], / page-faults: /],
  ['grpS', ['-G']],
  ['grpS', ['--max-stack', '2', '--ns']],
  ['grpS', ['-F', 'comm,tid,period,event,ip,sym,dso', '--max-stack', '1']],
  ['grpA', ['-F', SAMPLE], / task-clock: /],
  ['grpA', ['--comms', 'dd']],
  ['grpA', ['-F', SAMPLE, '-C', '0', '--show-task-events']],
  ['sw', ['--show-switch-events'], /PERF_RECORD_SWITCH OUT/],
  ['sw', ['--show-switch-events', '--ns', '-F', '+pid']],
  ['sw', ['--show-switch-events', '--show-task-events', '--show-mmap-events', '--show-lost-events']],
  ['sw', ['--show-switch-events', '-F', 'comm,tid,time,event', '--pid', 'PID1']],
  ['sw', ['--show-switch-events', '-G', '--time', '0%-50%']],
  ['swa', ['--show-switch-events', '-F', SAMPLE], /PERF_RECORD_SWITCH_CPU_WIDE OUT preempt/],
  ['swa', ['--show-switch-events', '-F', SAMPLE, '-C', '1', '--ns']],
  ['swa', ['--show-switch-events', '--comms', 'sh,sleep']],
  ['swa', ['--show-switch-events', '-F', 'comm,tid,cpu,time', '--tid', 'PID1']],
  ['bpf', [], / bpf_prog_[0-9a-f]{16}_perfpoke_busy\+0x[0-9a-f]+ \(bpf_prog_[0-9a-f]{16}_perfpoke_busy\)/],
  ['bpf', ['--show-bpf-events'], /PERF_RECORD_KSYMBOL addr [0-9a-f]+ len \d+ type 1 flags 0x0 name bpf_prog_/],
  ['bpf', ['--show-bpf-events', '--ns', '-F', '+pid', '-G']],
  ['bpf', ['-F', 'ip,sym,dso']],
  ['bpf', ['-F', 'ip,dso', '--show-bpf-events']],
  ['bpfa', ['--comms', 'bpf-busy'], / bpf_prog_[0-9a-f]{16}_perfpoke_busy\+/],
  ['bpfa', ['--comms', 'bpf-busy', '-G', '--show-bpf-events']],
  ['bpfa', ['--comms', 'bpf-busy', '--max-stack', '3', '-F', '+pid']],
  ['bpfpre', ['--comms', 'bpf-busy', '--show-bpf-events'], / 0\.000000: PERF_RECORD_KSYMBOL .*_perfpoke_busy/],
  ['bpfpre', ['-F', 'comm,tid,ip,sym,dso', '--comms', 'bpf-busy']],
  ['bpf2', ['--show-bpf-events'], /PERF_RECORD_KSYMBOL .*flags 0x1 name bpf_prog_[0-9a-f]{16}_perfpoke_busy/],
  ['bpf2', []],
  ['pf', ['-F', 'comm,tid,ip,sym,addr'], / [0-9a-f]{12} (?!\[unknown\])[\w.]+ +[0-9a-f]+ /],
  ['pf', ['-F', '+addr']],
  ['pf', ['-F', 'addr,ip,sym,symoff,dso', '--ns']],
  ['pgrp', [], / task-clock: /],
  ['pgrp', ['-F', 'comm,tid,period,event', '--ns']],
  ['pst', [], /^CPU {3}THREAD {13}VAL/],
  ['pst', ['-F', 'cpu,ip']],
  ['st', [], /^CPU {3}THREAD {13}VAL/],
  ['st', ['-F', 'cpu,ip,sym', '--ns']],
  ['st', ['--header', '--show-task-events']],
  ['st', ['-C', '0']],
  ['stAI', [], / task-clock\n/],
  ['stAI', ['--pid', '1', '--time', '10%/2']],
  ['stI', [], / context-switches\n/],
];

/** The busiest thread of a recording, from perf's own output. */
function placeholders(k: Key): Record<string, string> {
  const r = runPerf(['script', '-i', file(k), '-F', 'tid'])!;
  const counts = new Map<string, number>();
  for (const l of r.stdout.split('\n')) if (l.trim()) counts.set(l.trim(), (counts.get(l.trim()) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return { PID1: top[0]?.[0] ?? '1' };
}

for (const [k, rawArgs, expect] of CASES) {
  test(`script ${rawArgs.join(' ')} equals perf script on a live ${k}.data`, async (t) => {
    if (!needTool(t, 'perf')) return;
    if (k.startsWith('bpf') && !needTool(t, 'gcc')) return;
    if (k.startsWith('bpf') && bpfBuild) assert.fail(bpfBuild);
    if (!skipForKernel(t, failed.get(k))) return;
    const ph = rawArgs.some((a) => a === 'PID1') ? placeholders(k) : {};
    const args = rawArgs.map((a) => ph[a] ?? a);
    const perf = runPerf(['script', '-i', file(k), ...args])!;
    const mine = await scriptInProcess(file(k), args);
    if (perf.status !== 0) {
      const perfErr = perf.stderr.trim().split('\n')[0]!;
      // our --time errors name the option first (as script-options.test.ts compares them)
      assert.equal(mine.err?.replace(/^--time: /, ''), perfErr, `perf failed with "${perfErr}"`);
      return;
    }
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    if (expect) assert.match(perf.stdout, expect, `perf's output holds what this case is about: ${expect}`);
    assert.equal(firstDiff(mine.out, perf.stdout), 'equal');
    assert.equal(mine.out, perf.stdout);
  });
}

for (const [k, args] of [
  ['lost', []],
  ['lost', ['--show-lost-events']],
  ['ooo', []],
] as [Key, string[]][]) {
  test(`script ${args.join(' ')}: perf's stdout and its stderr warnings on ${k}.data`, (t) => {
    if (!needTool(t, 'perf')) return;
    if (!skipForKernel(t, failed.get(k))) return;
    const perf = runPerf(['script', '-i', file(k), ...args])!;
    const mine = runCli(['script', '-i', file(k), ...args]);
    assert.equal(perf.status, 0, perf.stderr);
    assert.equal(mine.status, 0, mine.stderr);
    if (k === 'ooo') assert.match(perf.stderr, /Warning:\n1 out of order events recorded\.\n/);
    else if (!/lost/i.test(perf.stderr + perf.stdout))
      t.diagnostic('the kernel lost nothing this time: both must print no warning');
    assert.equal(mine.stderr, perf.stderr);
    assert.equal(firstDiff(mine.stdout, perf.stdout), 'equal');
  });
}

test('script --json on a perf stat record file: one line saying it has no JSON form yet', async (t) => {
  if (!needTool(t, 'perf')) return;
  if (!skipForKernel(t, failed.get('st'))) return;
  const r = await scriptInProcess(file('st'), ['--json']);
  assert.equal(r.err, '--json: perf stat record files (STAT_ROUND counts) have no JSON form yet');
});
