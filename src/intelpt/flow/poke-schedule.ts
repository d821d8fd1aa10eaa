/**
 * Poke handling: when each text poke takes effect in the decode. perf's
 * intel-pt.c decodes all CPUs in time order and applies a TEXT_POKE when its
 * time comes; the time a decoder has reached advances only at timing points.
 * So before a poke at perf time T takes effect, every CPU's decoder runs up to
 * its first timing point (a TSC, or a PSB+ holding one) at or after T (in TSC
 * units); then the block cache drops every block overlapping the poked bytes
 * (the seed's intel_pt_text_poke) and reads see the code as of T. Without
 * timestamps (timeless decoding) perf applies every poke before decoding
 * anything: so does this.
 */
import type { BlockCache } from '../../x86/block-cache.js';
import type { CpuFlow } from './cpu-flow.js';
import { perfTimeToTsc, type PtTimeConv } from './time-conv.js';

export interface FlowPoke {
  /** perf time of the TEXT_POKE record. */
  time: bigint;
  addr: bigint;
  /** Bytes touched: max(old_len, new_len). */
  len: number;
}

/** The code image time blocks are read at; pokes move it forward. */
export interface ImageClock {
  time: bigint;
}

/** perf time that sees every poke applied (timeless decoding). */
export const AFTER_ALL_POKES = (1n << 63n) - 1n;

/**
 * Run every CPU's decoder to its end, applying `pokes` (in apply order) at
 * the points described above; `clock.time` is what the block cache's reader
 * passes to the code image.
 */
export function runWithPokes(
  flows: readonly CpuFlow[],
  pokes: readonly FlowPoke[],
  cache: BlockCache,
  clock: ImageClock,
  timeConv: PtTimeConv | undefined,
): void {
  if (timeConv) {
    for (const p of pokes) {
      const stop = perfTimeToTsc(p.time, timeConv);
      for (const f of flows) f.run(stop);
      clock.time = p.time;
      // Drop every cached block overlapping the poked bytes (perf walks back
      // from addr+len-1 for at most 4096+len bytes; BlockCache indexes by page).
      cache.invalidate(p.addr, p.addr + BigInt(Math.max(1, p.len)));
    }
  } else {
    clock.time = AFTER_ALL_POKES;
  }
  for (const f of flows) f.run();
}
