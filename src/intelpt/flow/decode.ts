/**
 * Decode every CPU's trace over a code image that changes with text pokes,
 * the way perf's intel-pt.c drives its decoders (poke-schedule.ts says when a
 * poke takes effect). Each CPU's trace is a TraceSource (a recording's queue
 * of AUXTRACE buffers read from the file through a window) or bytes in memory.
 */
import { BlockCache } from '../../x86/block-cache.js';
import { CpuFlow, type FlowErrorOptions, type FlowSink } from './cpu-flow.js';
import { runWithPokes, type FlowPoke, type ImageClock } from './poke-schedule.js';
import { runTimeOrdered, type OrderEvent } from './queue-order.js';
import type { PtTimeConv } from './time-conv.js';
import type { TraceSource } from './trace-source.js';
import type { QueueTasks, TaskEvent } from './queue-tasks.js';
import { SyncSwitch, type SwitchIps } from './sync-switch.js';

export type { FlowPoke } from './poke-schedule.js';

/** Bytes of code at an address as of a perf time (src/machine's CodeImage fits). */
export interface FlowCodeReader {
  read(addr: bigint, len: number, time?: bigint): Uint8Array;
}

export interface FlowInput {
  cpus: { cpu: number; trace: TraceSource | Uint8Array }[];
  /** Pokes perf applies (kernel cpumode), in apply order. */
  pokes: FlowPoke[];
  code: FlowCodeReader;
  /** Absent = timeless decoding. */
  timeConv?: PtTimeConv;
  retCompression?: boolean;
  /** Where decoding resumes after the errors perf's build decides (default: as perf without INTEL_PT_STRICT). */
  errors?: FlowErrorOptions;
  /** Bytes of each CPU's trace held in memory at a time, for TraceSources (default 256 KiB). */
  window?: number;
  sink: FlowSink;
  /**
   * Timed traces: decode all CPUs merged in perf's time order (queue-order.ts), processing the
   * side-band records at these perf times as perf does; pokes are applied at theirs. Absent: each
   * CPU runs on its own between pokes (output grouped per CPU, as before).
   */
  eventTimes?: readonly bigint[];
  /** The code image time the decoder reads at, kept up to date for the caller (e.g. to read an instruction's bytes). */
  clock?: ImageClock;
  /**
   * Task attribution: the side-band records that move tasks (in file order) and the tracker that
   * follows them as perf does; the sink reads `tracker.task(cpu)` for what it prints.
   */
  tasks?: { events: readonly TaskEvent[]; tracker: QueueTasks };
  /**
   * perf's sync_switch (sync-switch.ts, timed traces with `tasks`): where `__switch_to` and the switch path
   * are; absent when perf would not use it (switchIps says).
   */
  syncSwitch?: SwitchIps;
  /** perf's kernel_start (machine__kernel_start): returns to user space below it take the estimated time. */
  kernelStart?: bigint;
  /** perf's quick decoding (`q` 1, `qq` 2): see CpuFlowOptions. */
  quick?: number;
  /** perf's max_non_turbo_ratio: estimated times scale by it over the CBR (0 or none: unscaled). */
  maxNonTurboRatio?: number;
  /** MTC timing (perf's mtc_shift and TSC:CTC ratio; PtRecording.mtc): none, MTC and TMA give no time. */
  mtc?: { shift: number; tscCtcN: number; tscCtcD: number };
  /** Replay TNT patterns for a walkQuiet sink (CpuFlowOptions.tntPatterns; default true). */
  tntPatterns?: boolean;
  /** Other records to hand on in time order among the decoded output (perf script prints other events' samples). */
  others?: readonly { time: bigint; offset: number; deliver(): void }[];
}

export interface FlowResult {
  errors: number;
  instructions: number;
  perCpu: { cpu: number; errors: number; instructions: number }[];
  cacheHits: number;
  cacheMisses: number;
}

export function decodeFlow(input: FlowInput): FlowResult {
  // Before the first poke, code is read as of time -1: the image before any poke.
  const clock: ImageClock = input.clock ?? { time: -1n };
  clock.time = -1n;
  const cache = new BlockCache((addr, len) => {
    const b = input.code.read(addr, len, clock.time);
    return b.length ? b : undefined;
  });
  const opts = {
    retCompression: input.retCompression ?? true,
    errors: input.errors,
    window: input.window,
    quick: input.quick ?? 0,
    ...(input.timeConv && input.kernelStart !== undefined ? { kernelStart: input.kernelStart } : {}),
    maxNonTurboRatio: input.maxNonTurboRatio ?? 0,
    ...(input.mtc ? { mtc: input.mtc } : {}),
    tntPatterns: input.tntPatterns ?? true,
  };
  let muted: number | undefined;
  const timed = !!(input.eventTimes && input.timeConv);
  const t = input.tasks;
  const sync =
    timed && t && input.syncSwitch
      ? new SyncSwitch(
          input.syncSwitch,
          t.tracker,
          t.tracker.o.haveSchedSwitch,
          input.kernelStart ?? 1n << 63n,
          input.sink,
        )
      : undefined;
  // the switch states follow what perf samples: not what it decodes before a queue's first timestamp
  const inner = sync ? switchSink(input.sink, sync) : input.sink;
  const sink = timed ? mutable(inner, () => muted) : inner;
  const flows = input.cpus.map((c) => new CpuFlow(c.cpu, c.trace, cache, sink, opts));
  for (const f of sync ? flows : []) sync!.add(f);
  try {
    if (input.eventTimes && input.timeConv) {
      const events: OrderEvent[] = input.pokes.map((poke) => ({ time: poke.time, offset: -1, poke }));
      for (const time of input.eventTimes) events.push({ time, offset: -1 });
      for (const task of input.tasks?.events ?? []) events.push({ time: task.time, offset: task.offset, task });
      for (const o of input.others ?? []) events.push({ time: o.time, offset: o.offset, deliver: () => o.deliver() });
      // records of one time keep their file order (perf's ordered events)
      events.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.offset - b.offset));
      const mute = (cpu: number | undefined): void => {
        muted = cpu;
      };
      runTimeOrdered(flows, events, cache, clock, input.timeConv, mute, input.tasks?.tracker, sync);
    } else {
      // untimed, perf decodes at the end of the file (intel_pt_process_timeless_queues): the tasks are the last ones
      // the side band first, in time order, other events' samples printed as they come
      const side: { time: bigint; offset: number; run(): void }[] = (input.others ?? []).map((o) => ({
        time: o.time,
        offset: o.offset,
        run: () => o.deliver(),
      }));
      for (const e of t?.events ?? []) side.push({ time: e.time, offset: e.offset, run: () => t?.tracker.apply(e) });
      side.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.offset - b.offset));
      for (const e of side) e.run();
      if (t) for (const f of flows) t.tracker.beginRun(f.cpu);
      runWithPokes(flows, input.pokes, cache, clock, input.timeConv);
    }
  } finally {
    for (const c of input.cpus) if (!(c.trace instanceof Uint8Array)) c.trace.close();
  }
  return {
    errors: flows.reduce((a, f) => a + f.errors, 0),
    instructions: flows.reduce((a, f) => a + f.insnCount, 0),
    perCpu: flows.map((f) => ({ cpu: f.cpu, errors: f.errors, instructions: f.insnCount })),
    cacheHits: cache.hits,
    cacheMisses: cache.misses,
  };
}

/** The sink with sync_switch watching its branches (after their samples) and errors (before theirs). */
function switchSink(s: FlowSink, sync: SyncSwitch): FlowSink {
  const out: FlowSink = {};
  if (s.insns) out.insns = s.insns.bind(s);
  if (s.quick) out.quick = s.quick.bind(s);
  if (s.event) out.event = s.event.bind(s);
  if (s.power) out.power = s.power.bind(s);
  if (s.flush) out.flush = s.flush.bind(s);
  const branch = s.branch?.bind(s);
  out.branch = (cpu, from, to, kind, tsc, op) => {
    branch?.(cpu, from, to, kind, tsc, op);
    sync.onBranch(cpu, to, kind, op);
  };
  const error = s.error?.bind(s);
  out.error = (e) => {
    sync.onError(e.cpu, e.ip);
    error?.(e);
  };
  return out;
}

/** The sink, silent for the CPU `muted()` names (perf drops what it decodes before a queue's first timestamp). */
function mutable(s: FlowSink, muted: () => number | undefined): FlowSink {
  // muting drops reports, it adds none: a quiet sink stays quiet (sync_switch's sink is not: it watches branches)
  const out: FlowSink = s.walkQuiet ? { walkQuiet: true } : {};
  if (s.insns) {
    const f = s.insns.bind(s);
    out.insns = (cpu, insns, from, to, tsc, at) => (muted() !== cpu ? f(cpu, insns, from, to, tsc, at) : undefined);
  }
  if (s.branch) {
    const f = s.branch.bind(s);
    out.branch = (cpu, from, to, kind, tsc, op) => {
      if (muted() !== cpu) f(cpu, from, to, kind, tsc, op);
    };
  }
  if (s.quick) {
    const f = s.quick.bind(s);
    out.quick = (cpu, ip, tsc, branch) => {
      if (muted() !== cpu) f(cpu, ip, tsc, branch);
    };
  }
  if (s.error) {
    const f = s.error.bind(s);
    out.error = (e) => {
      if (muted() !== e.cpu) f(e);
    };
  }
  if (s.power) {
    const f = s.power.bind(s);
    out.power = (cpu, e) => {
      if (muted() !== cpu) f(cpu, e);
    };
  }
  if (s.event) {
    const f = s.event.bind(s);
    out.event = (cpu, what, ip, offset) => {
      if (muted() !== cpu) f(cpu, what, ip, offset);
    };
  }
  return out;
}
