/**
 * `perfpoke check` at scale: ≥ 1 million pokes over ≥ 10 000 sites.
 *
 * 1. In-process: build the code image and check it for n = 125k … 1M (2M
 *    with PERFPOKE_BENCH_BIG=1) pokes, jump-label flips over 16 384 sites;
 *    prints the time per size and the ratio per doubling (≈ 2.0 = linear).
 * 2. Via a file: the 1M-poke input written as a kcore_dir recording; times
 *    loadMachine + check against `perf script --show-text-poke-events` on the
 *    same directory (perf applies each poke to its kcore copy as it prints).
 * Random reads (the PT decoder's CodeReader hot path) are timed too.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CodeImage } from '../src/machine/code-image.js';
import { checkImage } from '../src/machine/check.js';
import { loadMachine } from '../src/machine/from-perf-data.js';
import { writeElfCore } from '../src/machine/elf-core-writer.js';
import type { Poke } from '../src/machine/poke.js';
import { PERF_RECORD_MISC_KERNEL } from '../src/abi/record-type.js';
import { writeMiniPerfData, type MiniRecord } from '../test/fixtures/kcore/mini-perf-data.js';
import { paired, timedRun } from './lib/paired.js';
import { recordGoal } from './lib/goals.js';
import { buildDist, cli, root } from './lib/build.js';

const BASE = 0xffffffff81000000n;
const SITES = 16_384;
const STRIDE = 16;
const NOP5 = Uint8Array.of(0x0f, 0x1f, 0x44, 0x00, 0x00);
const JMP5 = Uint8Array.of(0xe9, 0x0b, 0x00, 0x00, 0x00);

/** n pokes flipping random sites nop ↔ jmp; site state tracked so every poke is consistent. */
function makePokes(n: number, seed = 1): Poke[] {
  let x = seed >>> 0 || 1;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const on = new Uint8Array(SITES);
  const out: Poke[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const s = rnd() % SITES;
    const was = on[s]!;
    on[s] = was ^ 1;
    out[i] = {
      time: 1_000_000_000n + BigInt(i) * 100n,
      cpu: i & 1,
      addr: BASE + BigInt(s * STRIDE),
      oldBytes: was ? JMP5 : NOP5,
      newBytes: was ? NOP5 : JMP5,
      fileOffset: i * 56,
      misc: PERF_RECORD_MISC_KERNEL,
    };
  }
  return out;
}

function kernelBytes(): Uint8Array {
  const k = new Uint8Array(SITES * STRIDE).fill(0xcc);
  for (let s = 0; s < SITES; s++) k.set(NOP5, s * STRIDE);
  return k;
}

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/** Write the n-poke input as a `perf record --kcore` directory (data + kcore_dir) in `dir`. */
export function writeCheckRecording(dir: string, n: number): void {
  const kernel = kernelBytes();
  const recs: MiniRecord[] = [
    {
      kind: 'mmap',
      start: BASE,
      len: 0x3f000000n,
      pgoff: BASE,
      filename: '[kernel.kallsyms]_text',
      sid: { pid: -1, tid: 0, time: 0n, cpu: 0 },
    },
  ];
  for (const p of makePokes(n))
    recs.push({
      kind: 'text_poke',
      addr: p.addr,
      oldBytes: p.oldBytes,
      newBytes: p.newBytes,
      sid: { time: p.time, cpu: p.cpu },
    });
  mkdirSync(join(dir, 'kcore_dir'), { recursive: true });
  writeFileSync(join(dir, 'data'), writeMiniPerfData(recs));
  writeFileSync(join(dir, 'kcore_dir', 'kcore'), writeElfCore([{ vaddr: BASE, bytes: kernel }]));
  writeFileSync(
    join(dir, 'kcore_dir', 'kallsyms'),
    `${BASE.toString(16)} T _text\n${BASE.toString(16)} T _stext\n${(BASE + 0x100000n).toString(16)} T _etext\n`,
  );
  writeFileSync(join(dir, 'kcore_dir', 'modules'), '');
}

export async function run(): Promise<void> {
  const kernel = kernelBytes();
  const segs = [{ vaddr: BASE, bytes: kernel, flags: 7 }];
  const sizes = [125_000, 250_000, 500_000, 1_000_000];
  if (process.env.PERFPOKE_BENCH_BIG) sizes.push(2_000_000);
  let prev: number | undefined;
  console.log(`in-process build + check, ${SITES} sites:`);
  let big: CodeImage | undefined;
  for (const n of sizes) {
    const pokes = makePokes(n);
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const img = CodeImage.build(segs, pokes);
    const r = checkImage(img);
    const t = ms(t0);
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1000;
    if (!r.ok || r.pokes !== n || r.sites < 10_000)
      throw new Error(`bench input not consistent: ${r.stale} stale, ${r.sites} sites`);
    console.log(
      `  ${String(n).padStart(9)} pokes: ${t.toFixed(0).padStart(6)} ms (${((t * 1e6) / n).toFixed(0)} ` +
        `ns/poke, ${r.sites} sites; cpu ${cpu.toFixed(0)} ms)` +
        (prev ? `, ×${(t / prev).toFixed(2)} for ×2 pokes` : ''),
    );
    prev = t;
    big = img;
  }
  // CodeReader hot path: 16-byte reads at random sites and times
  if (big) {
    const q = 1_000_000;
    const t0 = process.hrtime.bigint();
    let sum = 0;
    for (let i = 0; i < q; i++) {
      const s = (i * 2654435761) % SITES;
      sum += big.read(BASE + BigInt(s * STRIDE), 16, 1_000_000_000n + BigInt((i * 97) % 1_000_000) * 100n).length;
    }
    const t = ms(t0);
    console.log(
      `  read(16 bytes, random site and time) over the 1M-poke image: ${((t * 1e6) / q).toFixed(0)} ns/read ` +
        `(${sum === q * 16 ? 'ok' : 'short reads!'})`,
    );
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < q; i++) big.read(BASE + BigInt(SITES * STRIDE) - 8n - BigInt(i % 4), 4);
    console.log(`  read(4 bytes) outside every poked site: ${((ms(t1) * 1e6) / q).toFixed(0)} ns/read`);
  }

  // via a file, against perf
  const n = 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-bench-check-'));
  try {
    writeCheckRecording(dir, n);
    const c0 = process.cpuUsage();
    let t0 = process.hrtime.bigint();
    const m = await loadMachine(dir);
    const tLoad = ms(t0);
    t0 = process.hrtime.bigint();
    const r = checkImage(m.image);
    const tCheck = ms(t0);
    if (!r.ok) throw new Error('file input not consistent');
    const cu = process.cpuUsage(c0);
    const oursCpu = (cu.user + cu.system) / 1000;
    const ours = tLoad + tCheck;
    console.log(
      `file with ${n} pokes (${SITES} sites), kcore_dir: perfpoke read ${tLoad.toFixed(0)} ms + check ` +
        `${tCheck.toFixed(0)} ms = ${ours.toFixed(0)} ms wall, ${oursCpu.toFixed(0)} ms cpu`,
    );
    t0 = process.hrtime.bigint();
    // bash's `time` gives perf's own cpu time (user+system), steadier than wall on a busy machine
    const p = spawnSync(
      'bash',
      [
        '-c',
        `TIMEFORMAT='%U %S'; time /usr/bin/perf script -i '${dir}' --show-text-poke-events >/dev/null 2>/dev/null`,
      ],
      { encoding: 'utf8' },
    );
    const tPerf = ms(t0);
    const cpuM = /([\d.]+) ([\d.]+)\s*$/.exec(p.stderr ?? '');
    if (p.error || p.status !== 0 || !cpuM) console.log('  perf script unavailable or failed: no ratio');
    else {
      const perfCpu = (Number(cpuM[1]) + Number(cpuM[2])) * 1000;
      console.log(
        `  perf script --show-text-poke-events on the same dir: ${tPerf.toFixed(0)} ms wall, ` +
          `${perfCpu.toFixed(0)} ms cpu; perfpoke/perf = ${(ours / tPerf).toFixed(2)} wall, ` +
          `${(oursCpu / perfCpu).toFixed(2)} cpu`,
      );
    }
    // the goal (issue 16): `perfpoke check` as users run it (compiled CLI), paired with perf
    if (!buildDist()) console.log('check: tsc build failed: no CLI figure');
    else {
      const pp = paired(
        cli('check', '-i', dir),
        ['/usr/bin/perf', 'script', '-i', dir, '--show-text-poke-events'],
        3,
        root,
      );
      recordGoal({
        what: `check -i (${n} pokes over ${SITES} sites)`,
        measured:
          `${pp.a.wall.toFixed(2)} s wall, ${pp.a.cpu.toFixed(2)} s cpu (median of ${pp.pairs}); ` +
          `vs perf script --show-text-poke-events: ${pp.speedup.toFixed(2)}x perf's speed`,
        target: '< 3 s',
        met: pp.a.wall < 3,
      });
      // `pokes` streams its lines: its peak RSS is the code image's, not the output's (one run: ~10 s)
      const pk = timedRun(cli('pokes', '-i', dir), root);
      recordGoal({
        what: 'pokes -i (1M pokes): streams, peak RSS',
        measured: `${pk.rssMB.toFixed(0)} MB, ${pk.cpu.toFixed(1)} s cpu, ${pk.wall.toFixed(1)} s wall (one run)`,
        target: '< 200 MB',
        met: pk.rssMB < 200,
      });
      recordGoal({
        what: 'check peak RSS (1M pokes)',
        measured: `${pp.a.rssMB.toFixed(0)} MB (perf ${pp.b.rssMB.toFixed(0)} MB)`,
        target: '< 200 MB',
        met: pp.a.rssMB < 200,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--make') writeCheckRecording(process.argv[3]!, Number(process.argv[4] ?? 1_000_000));
  else await run();
}
// (machines running other work inflate wall times; cpu time is printed beside them)
