/**
 * `simulate(opts)`: generate code, run it on N CPUs with jump-label flips,
 * and write a `perf record --kcore`-style directory that perf 6.1 decodes:
 *
 *   DIR/data              perf.data (intel_pt + dummy attrs, kernel MMAP,
 *                         AUXTRACE_INFO, TEXT_POKE, KSYMBOL, AUXTRACE, index)
 *   DIR/kcore_dir/kcore   ELF64 core with the text BEFORE the run
 *   DIR/kcore_dir/kallsyms, DIR/kcore_dir/modules (empty)
 *   DIR/truth.bin         every instruction each CPU executed, with its TSC
 *   DIR/truth.json        summary: program, sites, flips, counts, time conversion
 *
 * Every requirement perf 6.1 has for an intel_pt recording it did not make
 * (the numbered list in docs/design.md, "What perf 6.1 needs…") is met here;
 * the comments name the need by its number there.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { ByteWriter } from '../io/byte-writer.js';
import { emptyAttr, withAttrFlag, PerfType, PERF_COUNT_SW_DUMMY } from '../abi/event-attr.js';
import { SampleType } from '../abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_KERNEL, PERF_RECORD_KSYMBOL_TYPE_OOL } from '../abi/record-type.js';
import { writeKcoreDir } from './kcore-dir.js';
import { generateProgram, type Program } from './codegen.js';
import { executeCpu, type CpuRun, type Flip } from './executor.js';
import { Rng } from './rng.js';
import { SimPerfFileWriter, writeSampleId } from './perf-file.js';
import { type PtTimeConv, tscToPerfTime } from '../intelpt/flow/time-conv.js';
import { cyclesAttr, cyclesSamples } from './samples.js';
import { encodeTruth } from './truth.js';
import { planTasks, startComms, timedTaskRecords, type TaskPlan, type TaskRecord } from './tasks.js';

export interface SimOptions {
  out: string;
  seed?: number;
  cpus?: number;
  flips?: number;
  /** Approximate instructions to execute, all CPUs together. */
  size?: number;
  /** Jump-label sites in the code. */
  sites?: number;
  /** Write TEXT_POKE records (false = the "lost pokes" file). */
  textPokes?: boolean;
  /**
   * Leave the TSC bit out of the intel_pt attr's config: perf then decodes timeless and applies
   * every poke first (perf need 5 in docs/design.md).
   */
  timeless?: boolean;
  /** Flip indexes whose TEXT_POKE record is left out (a "lost" poke). */
  lostPokes?: number[];
  /** Keep the per-instruction ground truth (truth.bin). */
  truth?: boolean;
  psbPeriod?: number;
  retCompression?: boolean;
  /** Create a trampoline during the run (TEXT_POKE old_len 0 + KSYMBOL) and call it (default true). */
  trampoline?: boolean;
  /** Emit PSB+ (with FUP) inside bursts too, not only between them. */
  midBurstPsb?: boolean;
  /** Minimum ticks between INT3 write and TEXT_POKE (and again to the final write). */
  int3Window?: number;
  /**
   * Processes to schedule (src/sim/tasks.ts): with N > 0 the recording is `perf record -a`-like, with
   * COMM, ITRACE_START and SWITCH_CPU_WIDE records (HAVE_SCHED_SWITCH 3). 0 (default): none.
   */
  tasks?: number;
  /** Context switches per CPU when `tasks` > 0 (default 8). */
  switches?: number;
  /**
   * With `tasks`: the switches run through a kernel switch path (`__schedule` → `__perf_event_task_sched_out`,
   * `__switch_to_asm` → `__switch_to`, in kallsyms), so perf decodes with sync_switch, as on real `-a`
   * recordings; the records sit where that code runs. Default false: switch records at random times.
   */
  switchTo?: boolean;
  /** `cycles:k` samples per CPU (src/sim/samples.ts), an event perf script prints among the itrace samples. */
  samples?: number;
  /** Trace user mode too, in code the recording does not hold (executor.ts `userBase`). */
  userCode?: boolean;
  /** Power-event packets (CBR, PWRE, EXSTOP, PWRX; executor.ts `power`) and the pwr_evt config bit. */
  power?: boolean;
  /** MTC packets with this mtc_period (config bits 14-17: one each 2^N CTC ticks) and a TMA after each TSC. */
  mtcPeriod?: number;
  /** CYC packets with this cyc_thresh (config bits 19-22: 0 every cycle, else at least 2^(N-1) cycles). */
  cycThresh?: number;
  /** AUXTRACE_INFO's tsc_ctc_ratio_n / _d: TSC ticks per CTC tick (default 2/1). */
  tscCtc?: [number, number];
  onProgress?: (done: number, total: number) => void;
}

export interface SimSummary {
  seed: number;
  cpus: number;
  size: number;
  base: string;
  textSize: number;
  instructions: number;
  perCpu: { cpu: number; insns: number; bursts: number; traps: number; traceBytes: number; buffers: number }[];
  flips: (Flip & { addr: string; len: number; time: string; lost: boolean })[];
  sites: { id: number; addr: string; len: number; initial: number; func: string }[];
  textPokes: boolean;
  timeConv: { shift: number; mult: number; zero: string };
  burstBound: number;
}

/** Fake PMU type of intel_pt: AUXTRACE_INFO's pmu_type must name the attr's type. */
export const SIM_PT_PMU_TYPE = 8;
/** intel_pt PMU config bits (/sys/bus/event_source/devices/intel_pt/format). */
export const PT_CONFIG = { pt: 0, tsc: 10, noretcomp: 11, branch: 13, mtc: 9, cyc: 1, pwrEvt: 4 } as const;
/** The intel_pt config fields mtc_period (config:14-17) and cyc_thresh (config:19-22): their shifts. */
const MTC_PERIOD_SHIFT = 14n;
const CYC_THRESH_SHIFT = 19n;
/** perf derives the max non-turbo ratio from the TSC frequency (2 GHz here) when AUXTRACE_INFO gives 0. */
const SIM_MAX_NON_TURBO = 20;
const PERF_AUXTRACE_INTEL_PT = 1;

/** Where the simulated user code sits (no map, no bytes in the recording). */
export const SIM_USER_BASE = 0x401000n;

export { encodeTruth, readTruth, type Truth } from './truth.js';

export const SIM_TIME_CONV: PtTimeConv = { shift: 10, mult: 512, zero: 1_000_000_000n };

export function simulate(opts: SimOptions): SimSummary {
  const seed = opts.seed ?? 1;
  const cpus = opts.cpus ?? 2;
  const nFlips = opts.flips ?? 4;
  const size = opts.size ?? 200_000;
  const textPokes = opts.textPokes ?? true;
  const keepTruth = opts.truth ?? true;
  const retCompression = opts.retCompression ?? true;
  if (cpus < 1 || cpus > 256) throw new RangeError(`--cpus must be 1..256, got ${cpus}`);
  const [ctcN, ctcD] = opts.tscCtc ?? [2, 1];
  if (!(ctcN >= 1 && ctcD >= 1 && ctcN / ctcD < 512))
    throw new RangeError(`--tsc-ctc must be N/D with N, D >= 1 and N/D < 512, got ${ctcN}/${ctcD}`);
  if (opts.mtcPeriod !== undefined && !(opts.mtcPeriod >= 0 && opts.mtcPeriod <= 15))
    throw new RangeError(`--mtc-period must be 0..15, got ${opts.mtcPeriod}`);
  const timing =
    opts.mtcPeriod !== undefined || opts.cycThresh !== undefined
      ? {
          ...(opts.mtcPeriod !== undefined ? { mtcShift: opts.mtcPeriod } : {}),
          ...(opts.cycThresh !== undefined ? { cyc: opts.cycThresh ? 2 ** (opts.cycThresh - 1) : 1 } : {}),
          ctcN,
          ctcD,
          maxNonTurbo: SIM_MAX_NON_TURBO,
        }
      : undefined;

  const switchTo = !!(opts.switchTo && opts.tasks);
  const prog = generateProgram({ seed, sites: opts.sites ?? 12, contextSwitch: switchTo });
  // INT3 window half-length: longer than any burst (see executor.ts), and long
  // enough that CPUs really meet the INT3 (traps are part of the experiment).
  const D = Math.max(prog.maxBurstInsns + 64, opts.int3Window ?? 4000);
  const startTsc = 2_000_000;

  // Calibrate ticks per instruction (user gaps included) on a flip-free run.
  const cal = executeCpu(prog, { seed: seed ^ 0xca1, cpu: 0, startTsc, endTsc: startTsc + 200_000, flips: [] });
  const ticksPerInsn = 200_000 / Math.max(1, cal.insns);
  let span = Math.ceil((size / cpus) * ticksPerInsn);
  span = Math.max(span, (nFlips + 1) * (2 * D + 1000));
  const endTsc = startTsc + span;

  // Flip schedule: evenly spread, each INT3 window 2D long.
  const rng = new Rng(seed ^ 0xf11b);
  const state = prog.sites.map((s) => s.initial as number);
  const flips: Flip[] = [];
  for (let k = 0; k < nFlips && prog.sites.length; k++) {
    const t0 = startTsc + Math.floor(((k + 1) * span) / (nFlips + 1)) - D;
    const t1 = (t0 + D) & ~1; // even: its perf time is exact
    const site = rng.int(0, prog.sites.length - 1);
    const to = (1 - state[site]!) as 0 | 1;
    state[site] = to;
    flips.push({ site, t0, t1, t2: t1 + D, to });
  }

  // The trampoline is written (TEXT_POKE old_len 0 + KSYMBOL) at tTramp and
  // called only from D later, when no burst that began before tTramp runs.
  const tTramp = (startTsc + Math.floor(span * 0.3)) & ~1;
  const trampolineLive = opts.trampoline === false ? Infinity : tTramp + D;

  const runs: CpuRun[] = [];
  const switchRng = new Rng(seed ^ 0x5c4e);
  for (let cpu = 0; cpu < cpus; cpu++) {
    const switchAt: number[] = [];
    if (switchTo) for (let i = 0; i < (opts.switches ?? 8); i++) switchAt.push(switchRng.int(startTsc + 200, endTsc));
    switchAt.sort((a, b) => a - b);
    runs.push(
      executeCpu(prog, {
        seed,
        cpu,
        startTsc: startTsc + cpu * 37,
        endTsc,
        flips,
        psbPeriod: opts.psbPeriod,
        retCompression,
        keepTruth: keepTruth || !!opts.samples,
        ...(opts.userCode ? { userBase: SIM_USER_BASE } : {}),
        midBurstPsb: opts.midBurstPsb,
        power: !!opts.power,
        ...(timing ? { timing } : {}),
        trampolineLive,
        switchAt,
      }),
    );
    opts.onProgress?.(cpu + 1, cpus);
  }

  // Write everything into a sibling temp dir, then move it into place.
  const out = opts.out;
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, 'kcore_dir'), { recursive: true });
  writeKcoreDir(join(tmp, 'kcore_dir'), prog);
  const plan = opts.tasks
    ? planTasks({
        seed,
        cpus,
        tasks: opts.tasks,
        switchesPerCpu: opts.switches ?? 8,
        startTsc,
        endTsc: runs.reduce((a, r) => Math.max(a, r.chunks.at(-1)?.firstTsc ?? startTsc), endTsc),
        ...(switchTo ? { ran: runs.map((r) => r.switches) } : {}),
      })
    : undefined;
  writeData(join(tmp, 'data'), prog, runs, flips, {
    plan,
    startTsc: startTsc - 100,
    samples: opts.samples ?? 0,
    seed,
    userCode: !!opts.userCode,
    power: !!opts.power,
    mtcPeriod: opts.mtcPeriod,
    cycThresh: opts.cycThresh,
    tscCtc: [ctcN, ctcD],
    textPokes,
    retCompression,
    cpus,
    lost: new Set(opts.lostPokes ?? []),
    timeless: opts.timeless ?? false,
    tramp: trampolineLive === Infinity ? undefined : tTramp,
  });
  if (keepTruth) writeFileSync(join(tmp, 'truth.bin'), encodeTruth(prog.base, runs));
  const summary: SimSummary = {
    seed,
    cpus,
    size,
    base: `0x${prog.base.toString(16)}`,
    textSize: prog.code.length,
    instructions: runs.reduce((a, r) => a + r.insns, 0),
    perCpu: runs.map((r) => ({
      cpu: r.cpu,
      insns: r.insns,
      bursts: r.bursts,
      traps: r.traps,
      traceBytes: r.trace.length,
      buffers: r.chunks.length,
    })),
    flips: flips.map((f) => {
      const s = prog.sites[f.site]!;
      return {
        ...f,
        addr: `0x${(prog.base + BigInt(s.off)).toString(16)}`,
        len: s.len,
        time: tscToPerfTime(BigInt(f.t1), SIM_TIME_CONV).toString(),
        lost: !textPokes || (opts.lostPokes ?? []).includes(flips.indexOf(f)),
      };
    }),
    sites: prog.sites.map((s) => ({
      id: s.id,
      addr: `0x${(prog.base + BigInt(s.off)).toString(16)}`,
      len: s.len,
      initial: s.initial,
      func: s.func,
    })),
    textPokes,
    timeConv: { shift: SIM_TIME_CONV.shift, mult: SIM_TIME_CONV.mult, zero: SIM_TIME_CONV.zero.toString() },
    burstBound: prog.maxBurstInsns,
  };
  writeFileSync(join(tmp, 'truth.json'), `${JSON.stringify(summary, null, 1)}\n`);
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
  return summary;
}

function writeData(
  path: string,
  prog: Program,
  runs: CpuRun[],
  flips: Flip[],
  o: {
    textPokes: boolean;
    retCompression: boolean;
    cpus: number;
    lost: Set<number>;
    timeless: boolean;
    tramp: number | undefined;
    plan: TaskPlan | undefined;
    startTsc: number;
    samples: number;
    seed: number;
    userCode: boolean;
    power: boolean;
    mtcPeriod: number | undefined;
    cycThresh: number | undefined;
    tscCtc: [number, number];
  },
): void {
  const sampleType = SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.IDENTIFIER;
  const pt = emptyAttr();
  pt.type = SIM_PT_PMU_TYPE;
  // The TSC bit in config and in AUXTRACE_INFO, or perf decodes untimed (perf need 5).
  pt.config =
    (1n << BigInt(PT_CONFIG.pt)) |
    (o.timeless ? 0n : 1n << BigInt(PT_CONFIG.tsc)) |
    (1n << BigInt(PT_CONFIG.branch)) |
    (o.power ? 1n << BigInt(PT_CONFIG.pwrEvt) : 0n) |
    (o.mtcPeriod !== undefined ? (1n << BigInt(PT_CONFIG.mtc)) | (BigInt(o.mtcPeriod) << MTC_PERIOD_SHIFT) : 0n) |
    (o.cycThresh !== undefined ? (1n << BigInt(PT_CONFIG.cyc)) | (BigInt(o.cycThresh) << CYC_THRESH_SHIFT) : 0n) |
    (o.retCompression ? 0n : 1n << BigInt(PT_CONFIG.noretcomp));
  pt.samplePeriod = 1n;
  pt.sampleType = sampleType;
  let f = 0n;
  for (const n of ['disabled', 'exclude_hv', 'sample_id_all'] as const) f = withAttrFlag(f, n);
  if (!o.userCode) f = withAttrFlag(f, 'exclude_user');
  pt.flags = f;
  const dummy = emptyAttr();
  dummy.type = PerfType.SOFTWARE;
  dummy.config = BigInt(PERF_COUNT_SW_DUMMY);
  dummy.samplePeriod = 1n;
  dummy.sampleType = sampleType;
  f = 0n;
  for (const n of [
    'disabled',
    'mmap',
    'comm',
    'task',
    'sample_id_all',
    'ksymbol',
    'text_poke',
    'exclude_kernel',
    'exclude_hv',
  ] as const)
    f = withAttrFlag(f, n);
  // perf record -a asks for context-switch records on its tracking event
  if (o.plan) f = withAttrFlag(f, 'context_switch');
  dummy.flags = f;
  const ptIds = runs.map((r) => BigInt(1 + r.cpu));
  const dummyIds = runs.map((r) => BigInt(1001 + r.cpu));
  const cyclesIds = runs.map((r) => BigInt(2001 + r.cpu));
  const w = new SimPerfFileWriter(path, [
    { attr: pt, ids: ptIds },
    { attr: dummy, ids: dummyIds },
    ...(o.samples ? [{ attr: cyclesAttr(), ids: cyclesIds }] : []),
  ]);

  const body = (): ByteWriter => new ByteWriter(true, 256);
  const sid = (b: ByteWriter, time: bigint, cpu = 0): void =>
    writeSampleId(b, {
      pid: 0xffffffff,
      tid: 0xffffffff,
      time,
      cpu,
      id: dummyIds[Math.min(cpu, dummyIds.length - 1)]!,
    });

  // Kernel map: pgoff = _text, and the name perf gives the kernel's text map (perf need 1).
  {
    const b = body();
    const base = prog.base;
    b.u32(0xffffffff).u32(0).u64(base).u64(BigInt(prog.code.length)).u64(base);
    b.cstring('[kernel.kallsyms]_text', 8);
    sid(b, 0n);
    w.record(RecordType.MMAP, PERF_RECORD_MISC_KERNEL, b.finish().slice());
  }
  // AUXTRACE_INFO with intel_pt private fields (tools/perf/arch/x86/util/intel-pt.c).
  {
    const b = body();
    b.u32(PERF_AUXTRACE_INTEL_PT).u32(0);
    const priv = [
      BigInt(SIM_PT_PMU_TYPE), // INTEL_PT_PMU_TYPE
      BigInt(SIM_TIME_CONV.shift), // TIME_SHIFT
      BigInt(SIM_TIME_CONV.mult), // TIME_MULT
      SIM_TIME_CONV.zero, // TIME_ZERO
      1n, // CAP_USER_TIME_ZERO (perf need 5)
      1n << BigInt(PT_CONFIG.tsc), // TSC_BIT: a config MASK (perf_pmu__format_bits), not a bit number
      1n << BigInt(PT_CONFIG.noretcomp), // NORETCOMP_BIT (mask)
      o.plan ? 3n : 0n, // HAVE_SCHED_SWITCH (3: SWITCH_CPU_WIDE records)
      0n, // SNAPSHOT_MODE
      1n, // PER_CPU_MMAPS
      1n << BigInt(PT_CONFIG.mtc), // MTC_BIT (mask)
      0xfn << MTC_PERIOD_SHIFT, // MTC_FREQ_BITS: the mtc_period field's config mask
      BigInt(o.tscCtc[0]), // TSC_CTC_N
      BigInt(o.tscCtc[1]), // TSC_CTC_D
      1n << BigInt(PT_CONFIG.cyc), // CYC_BIT (mask)
      0n, // MAX_NONTURBO_RATIO
      0n, // FILTER_STR_LEN
    ];
    for (const v of priv) b.u64(v);
    w.record(RecordType.AUXTRACE_INFO, 0, b.finish().slice());
  }
  // A KSYMBOL for the INT3 handler's text, the way the kernel announces
  // out-of-line code (PERF_RECORD_KSYMBOL_TYPE_OOL).
  {
    const fn = prog.functions.find((x) => x.name === 'asm_exc_int3')!;
    const b = body();
    b.u64(prog.base + BigInt(fn.off))
      .u32(fn.size)
      .u16(PERF_RECORD_KSYMBOL_TYPE_OOL)
      .u16(0);
    b.cstring('asm_exc_int3', 8);
    sid(b, tscToPerfTime(1n, SIM_TIME_CONV));
    w.record(RecordType.KSYMBOL, PERF_RECORD_MISC_KERNEL, b.finish().slice());
  }

  const taskRecord = (r: TaskRecord): void => {
    const b = body();
    const time = r.tsc ? tscToPerfTime(BigInt(r.tsc), SIM_TIME_CONV) : 0n;
    r.body(b, time);
    if (r.sid) {
      const ids = r.sid.pt ? ptIds : dummyIds;
      const id = ids[Math.min(r.sid.cpu, ids.length - 1)]!;
      writeSampleId(b, { pid: r.sid.pid, tid: r.sid.tid, time, cpu: r.sid.cpu, id });
    }
    w.record(r.type, r.misc, b.finish().slice());
  };
  if (o.plan) for (const r of startComms(o.plan)) taskRecord(r);

  // Side-band and AUX buffers merged in time order.
  type Item = { tsc: number; kind: 0 | 1 | 2 | 3; flip?: Flip; run?: CpuRun; chunk?: number; task?: TaskRecord };
  const items: Item[] = [];
  if (o.plan) for (const task of timedTaskRecords(o.plan, o.startTsc)) items.push({ tsc: task.tsc, kind: 3, task });
  const cyclesOpts = { seed: o.seed, perCpu: o.samples, base: prog.base, ids: cyclesIds, plan: o.plan };
  if (o.samples) for (const task of cyclesSamples(runs, cyclesOpts)) items.push({ tsc: task.tsc, kind: 3, task });
  if (o.tramp !== undefined) items.push({ tsc: o.tramp, kind: 2 });
  if (o.textPokes)
    flips.forEach((fl, i) => {
      if (!o.lost.has(i)) items.push({ tsc: fl.t1, kind: 0, flip: fl });
    });
  for (const r of runs) {
    r.chunks.forEach((c, i) => {
      items.push({ tsc: c.firstTsc, kind: 1, run: r, chunk: i });
    });
  }
  items.sort((a, b) => a.tsc - b.tsc || a.kind - b.kind);
  let reference = 1n;
  const cpuOffset = new Map<number, number>();
  const curState = prog.sites.map((s) => s.initial as number);
  const before = new Map<Flip, number>();
  for (const fl of flips) {
    before.set(fl, curState[fl.site]!);
    curState[fl.site] = fl.to;
  }
  for (const it of items) {
    if (it.kind === 3) taskRecord(it.task!);
    else if (it.kind === 2) {
      // A new trampoline: KSYMBOL (OOL) then TEXT_POKE with old_len 0.
      const t = prog.trampoline;
      const addr = prog.base + BigInt(t.off);
      const time = tscToPerfTime(BigInt(it.tsc), SIM_TIME_CONV);
      const k = body();
      k.u64(addr).u32(t.bytes.length).u16(PERF_RECORD_KSYMBOL_TYPE_OOL).u16(0);
      k.cstring(t.name, 8);
      sid(k, time);
      w.record(RecordType.KSYMBOL, PERF_RECORD_MISC_KERNEL, k.finish().slice());
      if (o.textPokes) {
        const b = body();
        b.u64(addr).u16(0).u16(t.bytes.length).bytes(t.bytes);
        b.alignTo(8);
        sid(b, time);
        w.record(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL, b.finish().slice());
      }
    } else if (it.kind === 0) {
      const fl = it.flip!;
      const s = prog.sites[fl.site]!;
      // Old bytes are what the kernel really had, lost pokes included.
      const oldB = before.get(fl)! ? s.jmpBytes : s.nopBytes;
      const newB = fl.to ? s.jmpBytes : s.nopBytes;
      const b = body();
      b.u64(prog.base + BigInt(s.off))
        .u16(oldB.length)
        .u16(newB.length)
        .bytes(oldB)
        .bytes(newB);
      b.alignTo(8); // pad from old_len: the record body before it is 8+4 → align total to 8
      sid(b, tscToPerfTime(BigInt(fl.t1), SIM_TIME_CONV));
      // misc KERNEL, or perf ignores the poke (perf need 7).
      w.record(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL, b.finish().slice());
    } else {
      const r = it.run!;
      const c = r.chunks[it.chunk!]!;
      const off = cpuOffset.get(r.cpu) ?? 0;
      cpuOffset.set(r.cpu, off + (c.end - c.start));
      // Non-zero reference (perf need 2); buffers end on packet boundaries, 8-aligned (perf need 3).
      w.auxtrace(
        { offset: off, reference: reference++, idx: r.cpu, tid: 0xffffffff, cpu: r.cpu },
        r.trace.subarray(c.start, c.end),
      );
    }
  }
  w.close();
}
