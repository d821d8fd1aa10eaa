/**
 * `perfpoke dump` and the record iterator against `perf script -D` (perf 6.1)
 * on one recording made in the same run (system wide with frame-pointer
 * callchains, ~100 MB; PERFPOKE_BENCH_MB to change). Prints ratios, not
 * absolute times, and dump's peak RSS (budget: ~200 MB for a 100 MB file).
 *
 *   npm run bench -- dump
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { PerfFile } from '../src/perfdata/index.js';
import { paired } from './lib/paired.js';
import { recordGoal } from './lib/goals.js';
import { buildDist, cli as builtCli } from './lib/build.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Wall time and peak RSS (/usr/bin/time %M) of one command, stdout discarded. */
function timed(cmd: string, args: string[]): { ms: number; rssKb: number; status: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 1 << 26,
  });
  const ms = performance.now() - t0;
  const lines = r.stderr.toString().trim().split('\n');
  return { ms, rssKb: Number(lines[lines.length - 1]), status: r.status ?? -1 };
}

export async function run(): Promise<void> {
  const wantMb = Number(process.env.PERFPOKE_BENCH_MB ?? 100);
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-bench-dump-'));
  try {
    const f = join(dir, 'big.data');
    // frame-pointer callchains (dwarf stacks would make perf unwind every sample): ~11 MB/s on 2 CPUs at -c 20000
    const secs = Math.max(0.1, wantMb / 11).toFixed(2);
    const rec = spawnSync(
      '/usr/bin/perf',
      ['record', '-q', '-a', '-o', f, '-e', 'cpu-clock', '-c', '20000', '-g', '--', 'sleep', secs],
      { stdio: 'ignore' },
    );
    if (rec.status !== 0) {
      console.log('dump bench skipped: perf record -a failed');
      return;
    }
    const mb = statSync(f).size / 1e6;
    console.log(`input: ${mb.toFixed(1)} MB (perf record -a -g -c 20000 -- sleep ${secs})`);

    let t0 = performance.now();
    let n = 0;
    const pf = await PerfFile.open(f);
    for await (const r of pf.records()) if (r.size) n++;
    const iterMs = performance.now() - t0;
    t0 = performance.now();
    for await (const r of pf.records()) r.decode();
    const decodeMs = performance.now() - t0;
    await pf.close();

    const perf = timed('/usr/bin/perf', ['script', '-D', '-i', f]);
    const cli = join(root, 'src/cli/main.ts');
    const dump = timed(process.execPath, ['--import', 'tsx', cli, 'dump', '-i', f]);
    const dumpFile = timed(process.execPath, ['--import', 'tsx', cli, 'dump', '--order', 'file', '-i', f]);
    const dumpHex = timed(process.execPath, ['--import', 'tsx', cli, 'dump', '--hex', '-i', f]);
    console.log(
      `records: ${n}; in-process iterate ${(mb / (iterMs / 1000)).toFixed(0)} MB/s, iterate+decode ` +
        `${(mb / (decodeMs / 1000)).toFixed(0)} MB/s`,
    );
    console.log(`perf script -D: ${(perf.ms / 1000).toFixed(2)} s, peak RSS ${(perf.rssKb / 1024).toFixed(0)} MB`);
    for (const [name, m] of [
      ['dump', dump],
      ['dump --order file', dumpFile],
      ['dump --hex', dumpHex],
    ] as const) {
      console.log(
        `perfpoke ${name}: ${(m.ms / perf.ms).toFixed(2)}x perf script -D's time, peak RSS ` +
          `${(m.rssKb / 1024).toFixed(0)} MB (exit ${m.status})`,
      );
    }
    console.log(`record iteration alone: ${(iterMs / perf.ms).toFixed(3)}x perf script -D's time`);

    // the goal (issue 16): the compiled CLI against perf script -D, paired runs
    if (!buildDist()) console.log('dump: tsc build failed: no paired figure');
    else {
      const p = paired(builtCli('dump', '-i', f), ['/usr/bin/perf', 'script', '-D', '-i', f], 3, root);
      recordGoal({
        what: `dump -i (${mb.toFixed(0)} MB perf record -a -g) vs perf script -D`,
        measured: `${p.speedup.toFixed(2)}x perf (cpu ${p.cpuSpeedup.toFixed(2)}x), median of ${p.pairs} pairs`,
        target: '>= 5x',
        met: p.speedup >= 5,
      });
      recordGoal({
        what: 'dump peak RSS',
        measured: `${p.a.rssMB.toFixed(0)} MB (perf ${p.b.rssMB.toFixed(0)} MB)`,
        target: '< 200 MB',
        met: p.a.rssMB < 200,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
