/**
 * What `perfpoke record` follows, against `perf record` 6.1 on this machine:
 * a workload and its children only (-- CMD), existing tasks (-p, -t), with
 * the same per-task attr bits (inherit, enable_on_exec, disabled), the same
 * number of event ids (one per CPU and thread) and the same file mode.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { onlineCpus } from '../src/record/cpus.js';
import { repoRoot, runCli, runPerf } from './cli.js';
import { cannotRecord, perfMissing, scratch } from './record-helpers.js';

/** Skip with the reason, but fail in CI, where recording must work. */
function skipOrFail(t: TestContext): boolean {
  const why = perfMissing() ?? cannotRecord();
  if (!why) return false;
  if (process.env.CI === 'true') assert.fail(`cannot compare with perf record: ${why}`);
  t.skip(why);
  return true;
}

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

function runAsync(cmd: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

const cliAsync = (args: string[]): Promise<Run> =>
  runAsync(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), ...args]);

/** The per-task bits of one event, as `perf evlist -v` prints them. */
function taskBits(file: string, event: string): string[] {
  const r = runPerf(['evlist', '-v', '-i', file])!;
  assert.equal(r.status, 0, r.stderr);
  const line = r.stdout.split('\n').find((l) => l.startsWith(`${event}`));
  assert.ok(line, `${event} in ${r.stdout}`);
  return ['disabled', 'inherit', 'enable_on_exec'].filter((b) => new RegExp(`\\b${b}: 1\\b`).test(line));
}

/** How many ids the event has in the header (perf: one per CPU and thread). */
function idCount(file: string, event: string): number {
  const r = runPerf(['report', '--header-only', '-I', '-i', file])!;
  const m = new RegExp(`# event : name = ${event}[^,]*, , id = \\{ ([\\d, ]+) \\}`).exec(r.stdout);
  assert.ok(m, r.stdout);
  return m[1]!.split(',').length;
}

/** pid of every cpu-clock sample, and the pids the task events show forked. */
function samplePids(file: string): { samples: Set<number>; forked: [number, number][]; execs: number[] } {
  const r = runPerf(['script', '--show-task-events', '-i', file])!;
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', `perf script ${file} warned`);
  const d = runPerf(['script', '-D', '-i', file])!;
  assert.equal(d.status, 0, d.stderr);
  assert.equal(d.stderr, '', `perf script -D ${file} warned`);
  const samples = new Set<number>();
  const forked: [number, number][] = [];
  const execs: number[] = [];
  for (const l of r.stdout.split('\n')) {
    const s = /^\s*\S+\s+(\d+)\s+(?:\[\d+\]\s+)?[\d.]+:\s+\d+\s+cpu-clock:/.exec(l);
    if (s) samples.add(Number(s[1]));
    const f = /PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)/.exec(l);
    if (f) forked.push([Number(f[1]), Number(f[2])]);
    const e = /PERF_RECORD_COMM exec: \S+:(\d+)\//.exec(l);
    if (e) execs.push(Number(e[1]));
  }
  return { samples, forked, execs };
}

const cpuCount = (): number => onlineCpus().length;
/** tsx's loader by path: `--import tsx` resolves from the cwd, which for another user is a scratch folder. */
const tsxLoader = import.meta.resolve('tsx');

test('record -- CMD follows the command and its children only, with perf record -- CMD attrs', async (t) => {
  if (skipOrFail(t)) return;
  const dir = scratch('target-workload');
  const script = join(dir, 'work.sh');
  // the parent spins, then a child spins: both must be recorded, a bystander never
  writeFileSync(
    script,
    '#!/bin/sh\nspin() { i=0; while [ $i -lt $1 ]; do i=$((i+1)); done; }\nspin 40000\n' +
      "sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done'\n",
    { mode: 0o755 },
  );
  const bystander = spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' });
  t.after(() => bystander.kill('SIGKILL'));
  const ours = join(dir, 'ours.data');
  const theirs = join(dir, 'perf.data');
  const r = runCli(['record', '-e', 'cpu-clock', '-o', ours, '--', script]);
  assert.equal(r.status, 0, r.stderr);
  const p = runPerf(['record', '-e', 'cpu-clock', '-o', theirs, '--', script])!;
  assert.equal(p.status, 0, p.stderr);

  assert.deepEqual(taskBits(ours, 'cpu-clock'), ['disabled', 'inherit', 'enable_on_exec']);
  assert.deepEqual(taskBits(ours, 'cpu-clock'), taskBits(theirs, 'cpu-clock'), 'same per-task bits as perf');
  assert.deepEqual(taskBits(ours, 'dummy'), ['disabled', 'inherit', 'enable_on_exec']);
  assert.equal(idCount(ours, 'cpu-clock'), idCount(theirs, 'cpu-clock'), 'one event per CPU, as perf');
  assert.equal(idCount(ours, 'cpu-clock'), cpuCount());
  assert.equal(statSync(ours).mode & 0o777, statSync(theirs).mode & 0o777, 'file mode as perf');
  assert.equal(statSync(ours).mode & 0o777, 0o600);

  for (const [who, file] of [
    ['perfpoke', ours],
    ['perf', theirs],
  ] as const) {
    const { samples, forked, execs } = samplePids(file);
    // the first exec is the workload's (perf's enable_on_exec starts there); the sh -c child execs too
    assert.ok(execs.length >= 2, `${who}: the workload's and its child's exec`);
    const tree = new Set(execs.slice(0, 1));
    for (const [child, parent] of forked) if (tree.has(parent)) tree.add(child);
    assert.ok(samples.size >= 2, `${who}: parent and child sampled: ${[...samples]}`);
    for (const pid of samples) assert.ok(tree.has(pid), `${who}: sample of pid ${pid} outside the workload`);
    assert.ok(!samples.has(bystander.pid!), `${who}: the bystander was not recorded`);
  }
});

test('record -p PID / -t TID attach to a running process, end when it exits, as perf record -p/-t', async (t) => {
  if (skipOrFail(t)) return;
  const dir = scratch('target-attach');
  // a multi-threaded target (node's platform threads exist once its script runs) that busies its main thread
  const target = spawn(
    process.execPath,
    ['-e', 'process.stdout.write("ready\\n"); const e = Date.now() + 8000; while (Date.now() < e);'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  t.after(() => target.kill('SIGKILL'));
  const pid = target.pid!;
  await new Promise<void>((res) => target.stdout.once('data', () => res()));
  const tids = readdirSync(`/proc/${pid}/task`).map(Number);
  const threads = tids.length;
  assert.ok(threads > 1, 'node runs several threads');
  const f = (n: string): string => join(dir, n);
  const t0 = Date.now();
  const [ourP, ourT, perfP, perfT] = await Promise.all([
    cliAsync(['record', '-e', 'cpu-clock', '-p', String(pid), '-o', f('ours-p.data')]),
    cliAsync(['record', '-e', 'cpu-clock', '-t', String(pid), '-o', f('ours-t.data')]),
    runAsync('/usr/bin/perf', ['record', '-e', 'cpu-clock', '-p', String(pid), '-o', f('perf-p.data')]),
    runAsync('/usr/bin/perf', ['record', '-e', 'cpu-clock', '-t', String(pid), '-o', f('perf-t.data')]),
  ]);
  for (const r of [ourP, ourT, perfP, perfT]) assert.equal(r.status, 0, r.stderr);
  assert.ok(Date.now() - t0 < 30000, 'recording ended with the process');

  for (const mode of ['p', 't']) {
    const ours = f(`ours-${mode}.data`);
    const theirs = f(`perf-${mode}.data`);
    // perf turns inherit off for -t
    assert.deepEqual(taskBits(ours, 'cpu-clock'), mode === 'p' ? ['disabled', 'inherit'] : ['disabled']);
    assert.deepEqual(taskBits(ours, 'cpu-clock'), taskBits(theirs, 'cpu-clock'), `-${mode}: same bits as perf`);
    const want = cpuCount() * (mode === 'p' ? threads : 1);
    assert.equal(idCount(theirs, 'cpu-clock'), want, `perf -${mode}: one id per CPU and thread`);
    assert.equal(idCount(ours, 'cpu-clock'), want, `perfpoke -${mode}: one id per CPU and thread`);
    for (const file of [ours, theirs]) {
      // perf script's default column is the tid: -p may sample any of the target's threads, -t only the one
      const { samples } = samplePids(file);
      const allowed = mode === 'p' ? tids : [pid];
      assert.ok(samples.has(pid), `${file}: the target's main thread is sampled`);
      for (const tid of samples) assert.ok(allowed.includes(tid), `${file}: tid ${tid} is not the target's`);
    }
    // perf synthesizes COMM + MMAP2 for the thread map and no FORK: so do we
    const tasks = (file: string): string[] =>
      runPerf(['script', '--show-task-events', '--show-mmap-events', '-i', file])!
        .stdout.split('\n')
        .filter((l) => / 0\.000000: PERF_RECORD_(COMM|MMAP2|FORK)/.test(l) && l.includes(`${pid}/`))
        .map((l) => l.replace(/^.*?PERF_RECORD_/, ''))
        .sort();
    assert.deepEqual(tasks(ours), tasks(theirs), `-${mode}: synthesized task records as perf's`);
  }
});

test('record -p of a missing process and a missing command: one line, exit 2, no output', (t) => {
  if (skipOrFail(t)) return;
  const dir = scratch('target-errors');
  const r = runCli(['record', '-p', '999999999', '-o', join(dir, 'x.data')]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^perfpoke: -p 999999999: no such process\n$/);
  const c = runCli(['record', '-o', join(dir, 'y.data'), '--', 'no-such-command-here']);
  assert.equal(c.status, 2, c.stderr);
  assert.match(c.stderr, /^perfpoke: cannot run no-such-command-here: ENOENT/);
  assert.equal(c.stderr.trim().split('\n').length, 1);
  assert.deepEqual(readdirSync(dir), []);
  const u = runCli(['record', '-g', '-o', join(dir, 'z.data'), '--', 'true']);
  assert.equal(u.status, 2);
  assert.equal(u.stderr, 'perfpoke: record: -g: this perf record option is not supported by perfpoke record\n');
});

test('record -- CMD as an unprivileged user: user space only (:u), as perf falls back', (t) => {
  if (skipOrFail(t)) return;
  const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
  const runuser = spawnSync('runuser', ['-u', 'nobody', '--', 'true']);
  if (process.getuid?.() !== 0 || runuser.status !== 0 || paranoid < 2)
    return t.skip(
      `needs root, runuser and perf_event_paranoid ≥ 2 (uid ${process.getuid?.()}, ` + `paranoid ${paranoid})`,
    );
  const dir = scratch('target-nobody');
  chmodSync(dir, 0o777);
  const ours = join(dir, 'ours.data');
  const theirs = join(dir, 'perf.data');
  const main = join(repoRoot, 'src', 'cli', 'main.ts');
  const asNobody = (cmd: string[]) =>
    spawnSync('runuser', ['-u', 'nobody', '--', ...cmd], { cwd: dir, encoding: 'utf8' });
  const r = asNobody([
    process.execPath,
    '--import',
    tsxLoader,
    main,
    'record',
    '-e',
    'cpu-clock',
    '-o',
    ours,
    '--',
    'true',
  ]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /recording user space only \(:u\), as perf/);
  const p = asNobody(['/usr/bin/perf', 'record', '-e', 'cpu-clock', '-o', theirs, '--', 'true']);
  assert.equal(p.status, 0, p.stderr);
  const bits = (file: string): string => {
    const e = runPerf(['evlist', '-f', '-v', '-i', file])!;
    const line = e.stdout.split('\n').find((l) => l.startsWith('cpu-clock'))!;
    assert.ok(line, e.stdout + e.stderr);
    const name = line.slice(0, line.indexOf(': type'));
    return [name, ...['exclude_kernel', 'exclude_hv'].filter((b) => line.includes(`${b}: 1`))].join(' ');
  };
  assert.equal(bits(ours), 'cpu-clock:u exclude_kernel exclude_hv');
  assert.equal(bits(ours), bits(theirs));
});
