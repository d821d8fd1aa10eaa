/**
 * Decode every CPU's trace over a code image that changes with text pokes,
 * the way perf's intel-pt.c drives its decoders (poke-schedule.ts says when a
 * poke takes effect). Each CPU's trace is a TraceSource (a recording's queue
 * of AUXTRACE buffers read from the file through a window) or bytes in memory.
 */
import { BlockCache } from '../../x86/block-cache.js';
import { CpuFlow, type FlowErrorOptions, type FlowSink } from './cpu-flow.js';
import { runWithPokes, type FlowPoke, type ImageClock } from './poke-schedule.js';
import type { PtTimeConv } from './time-conv.js';
import type { TraceSource } from './trace-source.js';

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
  const clock: ImageClock = { time: -1n };
  const cache = new BlockCache((addr, len) => {
    const b = input.code.read(addr, len, clock.time);
    return b.length ? b : undefined;
  });
  const opts = { retCompression: input.retCompression ?? true, errors: input.errors, window: input.window };
  const flows = input.cpus.map((c) => new CpuFlow(c.cpu, c.trace, cache, input.sink, opts));
  try {
    runWithPokes(flows, input.pokes, cache, clock, input.timeConv);
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
