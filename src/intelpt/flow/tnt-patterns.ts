/**
 * TNT patterns per block (libxdc's technique), for sinks that want no report
 * of the branches a TNT packet decides (FlowSink.walkQuiet, e.g. perf's
 * `--itrace=e`): from a block and the next run of up to PATTERN_BITS TNT bits,
 * where the walk ends (the block whose conditional branch took the run's
 * last bit, and that bit), the instructions walked, whether a bit was taken
 * and the call blocks pushed on the return stack. Walking the run again from
 * that block replays it in one step instead of a walk per block.
 *
 * A pattern holds only plain walking: conditional branches, direct jumps and
 * calls, compressed returns, blocks cut at the instruction limit. A return
 * to a call made before the pattern ends it (where it goes is the walker's
 * return stack's). It stops before anything that may report or fail (an
 * indirect branch, a return on a 0 bit, code that cannot be read, a long
 * chain of direct jumps that may be a never-ending loop): the walk takes
 * those on. Patterns live on the block they start at and hold,
 * like the links they are made of (block-links.ts), only while no block was
 * dropped since (BlockCache.epoch): a text poke voids them all.
 */
import type { Block } from '../../x86/block-cache.js';
import { linkedBlock } from './block-links.js';
import type { BlockSource } from './flow-types.js';

/** TNT bits per pattern at most (a TNT8 packet holds up to 6, a TNT64 up to 47). */
export const PATTERN_BITS = 8;

/**
 * Direct jumps and calls in a row a pattern walks at most. A chain of them with no conditional branch between
 * is fixed by the code: one this long may be a never-ending loop, which the walk reports (its loop check).
 */
const MAX_CHAIN = 16;

export interface TntPattern {
  /** TNT bits taken (0: none, the walk takes the next bit itself). */
  bits: number;
  /**
   * The block whose branch took the last bit: a conditional branch (`taken` says which way) or a compressed
   * return, which continues after `ret` (its call block) or, undefined, after the call block the walker's
   * return stack pops (a call from before the pattern).
   */
  last: Block | undefined;
  taken: boolean;
  ret: Block | undefined;
  /** Instructions walked, the branches taking bits included. */
  insns: number;
  /** A branch was taken (a conditional one or a return): perf's state there is reported (PerfClock.refresh). */
  anyTaken: boolean;
  /** The call blocks left pushed on the return stack, in order (undefined: none). */
  calls: Block[] | undefined;
}

/** The key of a run of `k` bits (k ≤ PATTERN_BITS), its first bit the highest: a marker bit above them. */
export function patternKey(bits: number, k: number): number {
  return (1 << k) | bits;
}

/**
 * The pattern of the `k` bits `bits` (first bit highest) from `start`, walked over `src` (not cached). A
 * compressed return (bit 1) pops a call the pattern made; one popping an older call ends the pattern.
 */
export function walkPattern(src: BlockSource, start: Block, bits: number, k: number): TntPattern {
  const p: TntPattern = {
    bits: 0,
    last: undefined,
    taken: false,
    ret: undefined,
    insns: 0,
    anyTaken: false,
    calls: undefined,
  };
  let b = start;
  let insns = 0;
  let chain = 0;
  const calls: Block[] = [];
  while (p.bits < k) {
    const n = b.insns.length;
    if (b.stop === 'limit') {
      if (++chain > MAX_CHAIN) break;
      insns += n;
      b = linkedBlock(src, b, false, b.end);
      continue;
    }
    if (b.stop !== 'branch') break;
    const br = b.insns[n - 1]!;
    const bit = ((bits >>> (k - 1 - p.bits)) & 1) === 1;
    let ret: Block | undefined;
    if (br.op === 'ret') {
      // a return on a 0 bit is an error: the walk reports it
      if (!bit) break;
      ret = calls.pop();
    } else if (br.op !== 'jcc') {
      if ((br.op !== 'jmp' && br.op !== 'call') || br.indirect || ++chain > MAX_CHAIN) break;
      insns += n;
      // a call to the next instruction (getting the IP) pushes nothing, as in the walk
      if (br.op === 'call' && br.target !== b.end) calls.push(b);
      b = linkedBlock(src, b, true, br.target!);
      continue;
    }
    insns += n;
    chain = 0;
    p.bits++;
    p.insns = insns;
    p.last = b;
    p.taken = bit;
    p.ret = ret;
    if (bit) p.anyTaken = true;
    p.calls = calls.length ? calls.slice() : undefined;
    if (p.bits === k) break;
    if (br.op === 'jcc') b = linkedBlock(src, b, bit, bit ? br.target! : b.end);
    // the call block's fall-through link, as the walk takes it; a call from before the pattern: it ends
    else if (ret !== undefined) b = linkedBlock(src, ret, false, ret.end);
    else break;
  }
  return p;
}

/** Patterns kept per block at first: the keys of runs up to 6 bits (a TNT8 packet's); longer runs grow it. */
const FIRST_KEYS = 1 << 7;

/**
 * The pattern of `k` bits from `start`, from its cache when made in this epoch, else walked and kept. The
 * cache is an array by key (a Map lookup was the largest cost of a replay).
 */
export function cachedPattern(src: BlockSource, epoch: number, start: Block, bits: number, k: number): TntPattern {
  let m = start.patterns as (TntPattern | undefined)[] | undefined;
  const key = patternKey(bits, k);
  if (start.patternEpoch !== epoch || m === undefined) {
    m = new Array<TntPattern | undefined>(key < FIRST_KEYS ? FIRST_KEYS : 2 << PATTERN_BITS);
    start.patterns = m;
    start.patternEpoch = epoch;
  } else if (key >= m.length) {
    m.length = 2 << PATTERN_BITS;
  }
  let p = m[key];
  if (p === undefined) {
    p = walkPattern(src, start, bits, k);
    m[key] = p;
  }
  return p;
}
