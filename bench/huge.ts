/**
 * Peak RSS on a ≥ 4 GB recording (issue 16: "peak RSS < 200 MB on any file
 * size, a 4 GB recording included"): `stats`, `script` (symbol-free fields)
 * and `dump`, one run each, with `perf report --stats` beside them.
 *
 * Opt-in (it writes 4 GB and reads it four times):
 *   PERFPOKE_BENCH_HUGE=record  records bench/out/huge.data once (reused):
 *     perf record -a --call-graph dwarf,8192 -B -e cpu-clock -c 200000 -- sleep N
 *     (8 KB user stacks per sample make 4 GB in about a minute on 2 CPUs)
 *   PERFPOKE_BENCH_HUGE=/path/to/file  uses that file instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildDist, cli, root } from './lib/build.js';
import { recordGoal } from './lib/goals.js';
import { timedRun } from './lib/paired.js';

const GOAL_BYTES = 4e9;
// no ip: with it, every sample's 8 KB user stack is unwound (DWARF) and its inlined frames asked of
// addr2line, as perf does; that measures the unwinder, not the reader's memory
const FIELDS = 'comm,tid,pid,cpu,time,period,event';

function recordHuge(path: string): void {
  let seconds = 60;
  for (let i = 0; i < 3; i++) {
    const tmp = `${path}.tmp-${process.pid}`;
    console.log(`huge: recording ${seconds} s of perf record -a --call-graph dwarf (once)…`);
    const r = spawnSync(
      '/usr/bin/perf',
      ['record', '-q', '-a', '--call-graph', 'dwarf,8192', '-B', '-e', 'cpu-clock', '-c', '200000'].concat([
        '-o',
        tmp,
        '--',
        'sleep',
        String(seconds),
      ]),
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    if (!existsSync(tmp)) throw new Error(`perf record failed: ${r.stderr?.toString()}`);
    const size = statSync(tmp).size;
    renameSync(tmp, path);
    if (size >= GOAL_BYTES) return;
    seconds = Math.ceil((seconds * GOAL_BYTES * 1.1) / size);
    rmSync(path);
  }
  throw new Error('could not make a ≥ 4 GB recording');
}

export async function run(): Promise<void> {
  const want = process.env.PERFPOKE_BENCH_HUGE;
  if (!want) {
    console.log('huge: skipped (set PERFPOKE_BENCH_HUGE=record, or =FILE, to measure peak RSS on a ≥ 4 GB file)');
    return;
  }
  let file = want;
  if (want === 'record') {
    file = join(root, 'bench', 'out', 'huge.data');
    mkdirSync(join(root, 'bench', 'out'), { recursive: true });
    if (!existsSync(file) || statSync(file).size < GOAL_BYTES) recordHuge(file);
  }
  const gb = statSync(file).size / 1e9;
  if (!buildDist()) throw new Error('tsc build failed');
  const perf = timedRun(['/usr/bin/perf', 'report', '--stats', '-i', file]);
  console.log(
    `huge: ${file}: ${gb.toFixed(2)} GB; perf report --stats ${perf.wall.toFixed(1)} s, ${perf.rssMB.toFixed(0)} MB`,
  );
  for (const [what, args] of [
    ['stats', ['stats', '-i', file]],
    [`script -F ${FIELDS}`, ['script', '-i', file, '-F', FIELDS]],
    ['dump', ['dump', '-i', file]],
  ] as const) {
    const r = timedRun(cli(...args), root);
    console.log(
      `huge: perfpoke ${what}: ${r.wall.toFixed(1)} s wall, ${r.cpu.toFixed(1)} s CPU, ${r.rssMB.toFixed(0)} MB`,
    );
    recordGoal({
      what: `${what.split(' ')[0]} peak RSS on a ${gb.toFixed(1)} GB recording`,
      measured: `${r.rssMB.toFixed(0)} MB (perf report --stats: ${perf.rssMB.toFixed(0)} MB)`,
      target: '< 200 MB',
      met: r.rssMB < 200,
    });
  }
}
