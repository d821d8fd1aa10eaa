/**
 * Decode every CPU's trace over a code image that changes with text pokes,
 * the way perf's intel-pt.c drives its decoders: before a TEXT_POKE at time
 * T takes effect, every CPU's decoder runs up to its first timing point at
 * or after T (notes item 6); then the instruction cache is invalidated over
 * the poked range (the seed's intel_pt_text_poke) and reads see the new bytes.
 * Without timestamps (timeless decoding) perf applies every poke before
 * decoding anything (notes item 5): so do we.
 */
import { BlockCache } from '../../x86/block-cache.js';
import { CpuFlow, type FlowSink } from './cpu-flow.js';
import { perfTimeToTsc, type PtTimeConv } from './time-conv.js';

/** Bytes of code at an address as of a perf time (src/machine's CodeImage fits). */
export interface FlowCodeReader {
  read(addr: bigint, len: number, time?: bigint): Uint8Array;
}

export interface FlowPoke {
  /** perf time of the TEXT_POKE record. */
  time: bigint;
  addr: bigint;
  /** Bytes touched: max(old_len, new_len). */
  len: number;
}

export interface FlowInput {
  cpus: { cpu: number; trace: Uint8Array }[];
  /** Pokes perf applies (kernel cpumode), in apply order. */
  pokes: FlowPoke[];
  code: FlowCodeReader;
  /** Absent = timeless decoding. */
  timeConv?: PtTimeConv;
  retCompression?: boolean;
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
  const timed = input.timeConv !== undefined;
  let imageTime = timed ? -1n : (1n << 63n) - 1n;
  const cache = new BlockCache((addr, len) => {
    const b = input.code.read(addr, len, imageTime);
    return b.length ? b : undefined;
  });
  const flows = input.cpus.map((c) => new CpuFlow(c.cpu, c.trace, cache, input.sink, input.retCompression ?? true));
  if (timed) {
    for (const p of input.pokes) {
      const stop = perfTimeToTsc(p.time, input.timeConv!);
      for (const f of flows) f.run(stop);
      imageTime = p.time;
      // Drop every cached block overlapping the poked bytes (perf walks back
      // from addr+len-1 for at most 4096+len bytes; BlockCache indexes by page).
      cache.invalidate(p.addr, p.addr + BigInt(Math.max(1, p.len)));
    }
  }
  for (const f of flows) f.run();
  return {
    errors: flows.reduce((a, f) => a + f.errors, 0),
    instructions: flows.reduce((a, f) => a + f.insnCount, 0),
    perCpu: flows.map((f) => ({ cpu: f.cpu, errors: f.errors, instructions: f.insnCount })),
    cacheHits: cache.hits,
    cacheMisses: cache.misses,
  };
}
