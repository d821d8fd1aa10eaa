/**
 * Paired timing for the benches: run command A and command B in turn
 * (A B A B …), each as its own process under /usr/bin/time, stdout to
 * /dev/null, and take the ratio pair by pair. On a machine shared with other
 * jobs its speed drifts during a run; a ratio of two neighbouring runs does
 * not, so the median of the pair ratios is the figure to quote.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface Run {
  wall: number;
  cpu: number;
  rssMB: number;
}

/** One run: wall, user+system seconds and peak RSS; any exit status but 0 is a failure. */
export function timedRun(cmd: string[], cwd?: string): Run {
  const devnull = openSync('/dev/null', 'w');
  try {
    const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', ...cmd], {
      cwd,
      stdio: ['ignore', devnull, 'pipe'],
      maxBuffer: 1 << 26,
    });
    const err = r.stderr?.toString() ?? '';
    const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(err);
    if (!m || r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status}): ${err.slice(-400)}`);
    return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMB: Number(m[4]) / 1024 };
  } finally {
    closeSync(devnull);
  }
}

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface Paired {
  a: Run;
  b: Run;
  /** Median over pairs of B's wall time / A's: how many times faster A is. */
  speedup: number;
  /** The same on user+system time. */
  cpuSpeedup: number;
  pairs: number;
}

/** n pairs of (A, B) after one warm-up run of each; medians of the runs and of the pair ratios. */
export function paired(a: string[], b: string[], n: number, cwd?: string): Paired {
  timedRun(a, cwd);
  timedRun(b, cwd);
  const as: Run[] = [];
  const bs: Run[] = [];
  for (let i = 0; i < n; i++) {
    as.push(timedRun(a, cwd));
    bs.push(timedRun(b, cwd));
  }
  const med = (rs: Run[]): Run => ({
    wall: median(rs.map((r) => r.wall)),
    cpu: median(rs.map((r) => r.cpu)),
    rssMB: Math.max(...rs.map((r) => r.rssMB)),
  });
  return {
    a: med(as),
    b: med(bs),
    speedup: median(as.map((r, i) => bs[i]!.wall / Math.max(r.wall, 0.001))),
    cpuSpeedup: median(as.map((r, i) => bs[i]!.cpu / Math.max(r.cpu, 0.001))),
    pairs: n,
  };
}
