/**
 * Flow-decode throughput against perf 6.1 on the same simulated recording
 * (≥ 50 M instructions, generated in this run into bench/out/): instructions
 * per second of
 *   - `perf script --itrace=i0ns -F cpu,ip` with stdout to /dev/null,
 *   - `perfpoke decode --itrace=i0ns -F cpu,ip` with stdout to /dev/null (same output),
 *   - perfpoke's decodeFlow in process without printing (the decoder alone),
 * plus both decoders' error counts on the file without TEXT_POKEs.
 * PERFPOKE_BENCH_DECODE_SIZE overrides the size (instructions).
 *
 * First, the memory case: the same simulated recording at 1× and 8× the AUX
 * size (PERFPOKE_BENCH_DECODE_MEM_SIZE instructions, default 4 M, and 8 times
 * that), peak RSS of `perfpoke decode --itrace=e` and of `perf script
 * --itrace=e` on each, measured in turn in this run. perfpoke reads the AUX
 * data through a fixed window per CPU, so its peak must stay flat.
 * PERFPOKE_BENCH_DECODE_SKIP_SPEED=1 runs only this memory case.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, existsSync, openSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simulate } from '../src/sim/simulate.js';
import { loadPtRecording } from '../src/intelpt/flow/recording.js';
import { decodeFlow } from '../src/intelpt/flow/decode.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

/**
 * Wall and CPU seconds (user+sys, via /usr/bin/time when present) of a
 * command with stdout to /dev/null. The CPU figure is the fair one on a
 * loaded machine; both are printed.
 */
function timeCmd(cmd: string, args: string[]): { secs: number; cpu: number | null; status: number | null } {
  const devnull = openSync('/dev/null', 'w');
  const useTime = existsSync('/usr/bin/time');
  const t0 = performance.now();
  const r = useTime
    ? spawnSync('/usr/bin/time', ['-f', 'CPUTIME %U %S', cmd, ...args], {
        stdio: ['ignore', devnull, 'pipe'],
        cwd: root,
        maxBuffer: 1 << 26,
      })
    : spawnSync(cmd, args, { stdio: ['ignore', devnull, 'pipe'], cwd: root, maxBuffer: 1 << 26 });
  const secs = (performance.now() - t0) / 1000;
  closeSync(devnull);
  const m = /CPUTIME ([\d.]+) ([\d.]+)/.exec(r.stderr?.toString() ?? '');
  return { secs, cpu: m ? Number(m[1]) + Number(m[2]) : null, status: r.status };
}

/** Peak RSS (MB) and wall seconds of a command with stdout to /dev/null, from /usr/bin/time. */
function peakOf(cmd: string, args: string[]): { mb: number; secs: number; stderr: string } {
  const devnull = openSync('/dev/null', 'w');
  const r = spawnSync('/usr/bin/time', ['-f', 'PEAKRSS %M %e', cmd, ...args], {
    stdio: ['ignore', devnull, 'pipe'],
    cwd: root,
    maxBuffer: 1 << 26,
  });
  closeSync(devnull);
  const err = r.stderr?.toString() ?? '';
  const m = /PEAKRSS (\d+) ([\d.]+)/.exec(err);
  if (r.status !== 0 || !m) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${err.slice(-500)}`);
  return { mb: Number(m[1]) / 1024, secs: Number(m[2]), stderr: err };
}

async function memoryCase(out: string): Promise<void> {
  if (!existsSync('/usr/bin/time')) {
    console.log('memory case: /usr/bin/time missing, no peak RSS');
    return;
  }
  const base = Number(process.env.PERFPOKE_BENCH_DECODE_MEM_SIZE ?? 4_000_000);
  const perfOk = existsSync('/usr/bin/perf');
  const rows: { scale: number; auxMb: number; ours: number; perf: number | null; secs: number }[] = [];
  for (const scale of [1, 8]) {
    const dir = join(out, `decode-mem-${base}x${scale}`);
    const s = simulate({ out: dir, seed: 42, cpus: 2, flips: 40, size: base * scale, truth: false });
    const auxMb = s.perCpu.reduce((a, c) => a + c.traceBytes, 0) / 1048576;
    const cli = [join(root, 'src/cli/main.ts'), 'decode', '-i', dir, '--itrace=e'];
    const ours = peakOf(process.execPath, ['--import', 'tsx', ...cli]);
    const perf = perfOk ? peakOf('/usr/bin/perf', ['script', '-i', dir, '--itrace=e']) : null;
    rows.push({ scale, auxMb, ours: ours.mb, perf: perf?.mb ?? null, secs: ours.secs });
  }
  const f = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(1)} MB`);
  console.log('decode --itrace=e peak RSS, same simulated recording at 1× and 8× the AUX size:');
  for (const r of rows)
    console.log(
      `  ${r.scale}×: AUX ${r.auxMb.toFixed(1)} MB  perfpoke ${f(r.ours)} (${r.secs.toFixed(1)} s)  perf ${f(r.perf)}`,
    );
  const [a, b] = [rows[0]!, rows[1]!];
  console.log(
    `  8× / 1× peak: perfpoke ${(b.ours / a.ours).toFixed(2)}` +
      (a.perf && b.perf ? `, perf ${(b.perf / a.perf).toFixed(2)}` : '') +
      ` (flat = 1.00; AUX grew ${(b.auxMb / a.auxMb).toFixed(1)}×)`,
  );
}

export async function run(): Promise<void> {
  const out = join(here, 'out');
  mkdirSync(out, { recursive: true });
  await memoryCase(out);
  if (process.env.PERFPOKE_BENCH_DECODE_SKIP_SPEED === '1') return;
  const size = Number(process.env.PERFPOKE_BENCH_DECODE_SIZE ?? 52_000_000); // simulates ≥ 50 M
  const dir = join(out, `decode-${size}`);
  const dirNo = join(out, `decode-${size}-nopoke`);
  const opts = { seed: 42, cpus: 2, flips: 40, size, truth: false };
  let t0 = performance.now();
  const s = simulate({ out: dir, ...opts });
  simulate({ out: dirNo, ...opts, textPokes: false });
  const simSecs = (performance.now() - t0) / 1000;
  console.log(
    `sim: ${s.instructions} instructions, ${s.perCpu.reduce((a, c) => a + c.traceBytes, 0)} trace bytes, ` +
      `2 files in ${simSecs.toFixed(1)} s (${((s.instructions * 2) / simSecs / 1e6).toFixed(2)} M insn/s)`,
  );

  t0 = performance.now();
  const rec = await loadPtRecording(dir);
  const loadSecs = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const r = decodeFlow({
    cpus: rec.cpus,
    pokes: rec.pokes,
    code: rec.machine.image,
    timeConv: rec.timeConv,
    retCompression: rec.retCompression,
    sink: {},
  });
  const libSecs = (performance.now() - t0) / 1000;
  if (r.instructions !== s.instructions)
    throw new Error(`decodeFlow decoded ${r.instructions} instructions, simulated ${s.instructions}`);

  const perfOk = existsSync('/usr/bin/perf');
  const cli = timeCmd(process.execPath, [
    '--import',
    'tsx',
    join(root, 'src/cli/main.ts'),
    'decode',
    '-i',
    dir,
    '--itrace=i0ns',
    '-F',
    'cpu,ip',
  ]);
  const perf = perfOk ? timeCmd('/usr/bin/perf', ['script', '-i', dir, '--itrace=i0ns', '-F', 'cpu,ip']) : null;
  const n = s.instructions;
  const rate = (secs: number): string => `${(n / secs / 1e6).toFixed(2)} M insn/s`;
  const both = (t: { secs: number; cpu: number | null }): string =>
    `wall ${t.secs.toFixed(2)} s (${rate(t.secs)})` +
    (t.cpu !== null ? `, cpu ${t.cpu.toFixed(2)} s (${rate(t.cpu)})` : '');
  console.log(
    `perfpoke decodeFlow, in process, no output: ${libSecs.toFixed(2)} s (${rate(libSecs)})` +
      ` + ${loadSecs.toFixed(2)} s load`,
  );
  console.log(`perfpoke decode --itrace=i0ns -F cpu,ip > /dev/null: ${both(cli)}`);
  if (perf) {
    console.log(`perf script --itrace=i0ns -F cpu,ip > /dev/null: ${both(perf)}`);
    const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
    console.log(
      `perfpoke speed relative to perf (goal ≥ 1×): decode CLI ${ratio(perf.secs, cli.secs)} wall` +
        (perf.cpu !== null && cli.cpu !== null ? `, ${ratio(perf.cpu, cli.cpu)} cpu` : '') +
        `; decoder alone (load + decode, no printing) ${ratio(perf.cpu ?? perf.secs, libSecs + loadSecs)}`,
    );
  } else console.log('perf not installed: no ratio');

  // Errors on the no-poke file: both decoders, same run.
  const ours = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'decode', '-i', dirNo, '--itrace=e', '--json'],
    { cwd: root, maxBuffer: 1 << 28 },
  );
  const ourErrors = JSON.parse(ours.stdout.toString()).errors as number;
  if (perfOk) {
    const pe = spawnSync('/usr/bin/perf', ['script', '-i', dirNo, '--itrace=e'], { cwd: root, maxBuffer: 1 << 28 });
    const perfErrors = pe.stdout
      .toString()
      .split('\n')
      .filter((l) => l.includes('instruction trace error')).length;
    console.log(
      `without TEXT_POKEs: perfpoke ${ourErrors} errors, perf ${perfErrors} errors` +
        (ourErrors === perfErrors ? ' (equal)' : ' (DIFFER)'),
    );
  } else console.log(`without TEXT_POKEs: perfpoke ${ourErrors} errors`);
}
