/**
 * Recording throughput: `perfpoke record -a -e cpu-clock -F 10000` against
 * `perf record --switch-events` with the same flags (perfpoke records
 * context switches by default), on the same workloads in the same run:
 *
 *   busy   two CPU-bound processes for 3 s each: the sustained sample rate,
 *          which both recorders should keep with no loss;
 *   storm  perf bench sched messaging: hundreds of processes and a storm of
 *          context switches, which overloads a small machine; what counts
 *          here is how much each recorder loses.
 *
 * Both files are counted by perf 6.1 itself (report --stats, script -D), so
 * the figures are comparable: kernel records per second between the first
 * and the last sample, and records lost (the figure that judges a recorder;
 * the rate mostly follows the workload and the machine's load).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const busyJs = 'const e = Date.now() + 3000; while (Date.now() < e);';
const WORKLOADS = [
  {
    name: 'busy',
    argv: ['sh', '-c', `"${process.execPath}" -e '${busyJs}' & "${process.execPath}" -e '${busyJs}'; wait`],
  },
  { name: 'storm', argv: ['/usr/bin/perf', 'bench', 'sched', 'messaging', '-g', '2', '-l', '100'] },
];

interface Run {
  seconds: number;
  counts: Record<string, number>;
  lost: number;
  bytes: number;
}

function sh(cmd: string, args: string[]): { status: number; stdout: string; stderr: string; ms: number } {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, cwd: root });
  return {
    status: r.status ?? -1,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    ms: Number(process.hrtime.bigint() - t) / 1e6,
  };
}

function perfCounts(file: string): { counts: Record<string, number>; lost: number } {
  const counts: Record<string, number> = {};
  for (const m of sh('/usr/bin/perf', ['report', '--stats', '-i', file]).stdout.matchAll(
    /^\s*(\w+) events:\s+(\d+)/gm,
  )) {
    counts[m[1]!] ??= Number(m[2]); // the first table is the aggregated one
  }
  const d = sh('/usr/bin/perf', ['script', '-D', '-i', file]).stdout;
  let lost = 0;
  for (const m of d.matchAll(/PERF_RECORD_LOST: id:\d+: lost:(\d+)/g)) lost += Number(m[1]);
  return { counts, lost };
}

/**
 * Seconds between the first and the last sample: how long the events were really on
 * (cpu-clock ticks on idle CPUs too).
 */
function sampleSpan(file: string): number | undefined {
  const times = [...sh('/usr/bin/perf', ['script', '-F', 'time', '-i', file]).stdout.matchAll(/([\d.]+):/g)].map((m) =>
    Number(m[1]),
  );
  if (times.length < 2) return undefined;
  return Math.max(...times.slice(-100)) - Math.min(...times.slice(0, 100));
}

function record(tool: 'perf' | 'perfpoke', w: (typeof WORKLOADS)[number], out: string): Run {
  const flags = ['-a', '-e', 'cpu-clock', '-F', '10000', '-o', out, '--', ...w.argv];
  const r =
    tool === 'perf'
      ? sh('/usr/bin/perf', ['record', '--switch-events', ...flags])
      : sh(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'record', ...flags]);
  if (r.status !== 0)
    throw new Error(`${tool} record failed (${r.status}): ${r.stderr.trim().split('\n').slice(-1)[0]}`);
  return { seconds: sampleSpan(out) ?? r.ms / 1000, ...perfCounts(out), bytes: statSync(out).size };
}

/** Records the kernel produced during the workload (perf's synthesized COMM/MMAP excluded). */
const kernelRecords = (r: Run): number =>
  (r.counts.SAMPLE ?? 0) + (r.counts.SWITCH_CPU_WIDE ?? 0) + (r.counts.FORK ?? 0) + (r.counts.EXIT ?? 0);

export async function run(): Promise<void> {
  if (!existsSync(join(root, 'build', 'Release', 'perfpoke_record.node'))) {
    console.log('record: skipped: the native addon is not built');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-bench-record-'));
  try {
    for (const w of WORKLOADS) {
      let perf: Run;
      let ours: Run;
      try {
        perf = record('perf', w, join(dir, `perf-${w.name}.data`));
        ours = record('perfpoke', w, join(dir, `perfpoke-${w.name}.data`));
      } catch (e) {
        console.log(`record ${w.name}: skipped: ${(e as Error).message}`);
        continue;
      }
      console.log(`workload ${w.name}: ${w.argv.join(' ')}`);
      const show = (name: string, r: Run): number => {
        const rate = kernelRecords(r) / r.seconds;
        const made = kernelRecords(r) + r.lost;
        console.log(
          `  ${name.padEnd(16)} ${Math.round(rate).toString().padStart(8)} kernel records/s over ` +
            `${r.seconds.toFixed(2)} s recorded  ` +
            `(samples ${r.counts.SAMPLE ?? 0}, switches ${r.counts.SWITCH_CPU_WIDE ?? 0})  lost ${r.lost} ` +
            `(${((100 * r.lost) / Math.max(1, made)).toFixed(2)}%)  ` +
            `file ${(r.bytes / 1048576).toFixed(1)} MB`,
        );
        return rate;
      };
      const p = show('perf record', perf);
      const o = show('perfpoke record', ours);
      console.log(`  ratio perfpoke/perf kernel records/s: ×${(o / p).toFixed(2)}; lost ${ours.lost} vs ${perf.lost}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
