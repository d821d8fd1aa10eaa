/**
 * Issue 16's Intel PT decode goals, each against perf 6.1 in the same run:
 * `perfpoke decode -i DIR --itrace=X` vs `perf script -i DIR --itrace=X`
 * for X = e (errors only: the decoder alone), i0ns (every instruction) and
 * b (branches), stdout to /dev/null, on simulated kernel traces (2 CPUs,
 * 40 jump-label flips with TEXT_POKE records) of 20 M and 100 M
 * instructions, generated into bench/out/. The compiled CLI runs, as users
 * run it (bench/lib/build.ts).
 *
 * Paired runs (A B A B …, bench/lib/paired.ts): the machine is shared, so
 * the figure is the median of the ratios of neighbouring runs, wall and
 * CPU. Before timing, the e and b outputs of both tools on the smaller
 * trace are compared by SHA-256 (speed must not buy a different byte).
 *
 * Environment: PERFPOKE_BENCH_PT_SIZES (instructions, comma separated,
 * default 20000000,100000000), PERFPOKE_BENCH_PT_PAIRS (pairs per job on
 * the first size, default 3; larger sizes take 1), PERFPOKE_BENCH_PT_MODES
 * (default e,i0ns,b).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { buildDist, cli, root } from './lib/build.js';
import { recordGoal } from './lib/goals.js';
import { paired, type Paired } from './lib/paired.js';

const TARGET: Record<string, number> = { e: 2, i0ns: 1.5, b: 1.5 };
const PERF = '/usr/bin/perf';

/** SHA-256 of a command's stdout (streamed: the outputs run to gigabytes). */
function stdoutHash(cmd: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd[0]!, cmd.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
    const h = createHash('sha256');
    p.stdout.on('data', (d: Buffer) => h.update(d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(h.digest('hex')) : reject(new Error(`${cmd.join(' ')}: ${code}`))));
  });
}

const x = (v: number): string => `${v.toFixed(2)}x`;

export async function run(): Promise<void> {
  if (!existsSync(PERF)) {
    console.log('pt-ratios: perf not installed, no ratio');
    return;
  }
  if (!buildDist()) throw new Error('pt-ratios: tsc build failed');
  const sizes = (process.env.PERFPOKE_BENCH_PT_SIZES ?? '20000000,100000000').split(',').map(Number);
  const pairs = Number(process.env.PERFPOKE_BENCH_PT_PAIRS ?? 3);
  const modes = (process.env.PERFPOKE_BENCH_PT_MODES ?? 'e,i0ns,b').split(',');
  const out = join(root, 'bench', 'out');
  mkdirSync(out, { recursive: true });
  /** Peak RSS of perfpoke per size (the largest of its modes). */
  const peaks: { size: number; insns: number; mb: number; perfMb: number }[] = [];
  for (const [k, size] of sizes.entries()) {
    const dir = join(out, `pt-ratios-${size}`);
    const s = simulate({ out: dir, seed: 42, cpus: 2, flips: 40, size, truth: false });
    const insns = s.instructions;
    console.log(`trace: ${insns} instructions, ${s.perCpu.reduce((a, c) => a + c.traceBytes, 0)} trace bytes (${dir})`);
    if (k === 0) {
      for (const m of modes.filter((m) => m !== 'i0ns')) {
        const [a, b] = await Promise.all([
          stdoutHash(cli('decode', '-i', dir, `--itrace=${m}`)),
          stdoutHash([PERF, 'script', '-i', dir, `--itrace=${m}`]),
        ]);
        console.log(`--itrace=${m} output: ${a === b ? 'identical to perf (sha256)' : 'DIFFERS from perf'}`);
        if (a !== b) throw new Error(`pt-ratios: decode --itrace=${m} output differs from perf script's`);
      }
    }
    let mb = 0;
    let perfMb = 0;
    for (const m of modes) {
      const n = k === 0 ? pairs : 1;
      const p: Paired = paired(
        cli('decode', '-i', dir, `--itrace=${m}`),
        [PERF, 'script', '-i', dir, `--itrace=${m}`],
        n,
      );
      mb = Math.max(mb, p.a.rssMB);
      perfMb = Math.max(perfMb, p.b.rssMB);
      const target = TARGET[m] ?? 1;
      console.log(
        `decode --itrace=${m}, ${(insns / 1e6).toFixed(0)} M insns: perfpoke ${p.a.wall.toFixed(2)} s wall ` +
          `${p.a.cpu.toFixed(2)} s cpu ${p.a.rssMB.toFixed(0)} MB; perf ${p.b.wall.toFixed(2)} s ` +
          `${p.b.cpu.toFixed(2)} s cpu ${p.b.rssMB.toFixed(0)} MB`,
      );
      recordGoal({
        what: `decode --itrace=${m} (${(insns / 1e6).toFixed(0)} M insns) vs perf script`,
        measured: `${x(p.speedup)} perf (cpu ${x(p.cpuSpeedup)}), median of ${n} pair${n > 1 ? 's' : ''}`,
        target: `>= ${target}x`,
        met: p.speedup >= target,
      });
    }
    peaks.push({ size, insns, mb, perfMb });
  }
  for (const p of peaks)
    recordGoal({
      what: `decode peak RSS (${(p.insns / 1e6).toFixed(0)} M insns, largest of ${modes.join(', ')})`,
      measured: `${p.mb.toFixed(0)} MB (perf ${p.perfMb.toFixed(0)} MB)`,
      target: '< 200 MB',
      met: p.mb < 200,
    });
  const [first, last] = [peaks[0], peaks[peaks.length - 1]];
  if (first && last && last !== first) {
    const grow = last.mb / first.mb;
    recordGoal({
      what: `decode peak RSS ${(first.insns / 1e6).toFixed(0)} M -> ${(last.insns / 1e6).toFixed(0)} M insns`,
      measured: `${x(grow)} (perf ${x(last.perfMb / first.perfMb)})`,
      target: 'flat (<= 1.10x)',
      met: grow <= 1.1,
    });
  }
}
