import { Decoder, DecoderOptions, Instruction } from './iced.js';
import { codeClass, type InsnClass } from './classify.js';

/** One decoded instruction of a block. */
export interface Insn extends InsnClass {
  ip: bigint;
}

/**
 * A run of instructions from `start` up to and including the first one that
 * ends a block (`stop: 'branch'`), or cut short: `limit` (maxInsns reached,
 * continue at `end`), `invalid` (the bytes at `end` do not decode), `nomap`
 * (no bytes readable at `end`).
 */
export interface Block {
  start: bigint;
  /** Address after the last instruction. */
  end: bigint;
  insns: Insn[];
  stop: 'branch' | 'limit' | 'invalid' | 'nomap';
  /**
   * A flow walker's links to the blocks after this one's last branch (taken: at its target; fall: at `end`),
   * so the next block needs no lookup by address. Valid only while `linkEpoch` equals the cache's `epoch`,
   * which moves whenever a block is dropped (a text poke may have changed what follows).
   */
  taken?: Block | undefined;
  fall?: Block | undefined;
  linkEpoch?: number;
  /**
   * A flow walker's TNT patterns starting at this block (src/intelpt/flow/tnt-patterns.ts: per run of TNT
   * bits, where the walk ends), valid like the links only while `patternEpoch` equals the cache's `epoch`.
   */
  patterns?: (object | undefined)[] | undefined;
  patternEpoch?: number;
}

/** Reads up to `len` bytes of code at `addr`; shorter or undefined at the end of mapped memory. */
export type CodeRead = (addr: bigint, len: number) => Uint8Array | undefined;

const PAGE_SHIFT = 12n;
const MAX_INSN = 15;
const CHUNK = 256;
/** BigInt(0..15), so advancing the address allocates one bigint, not two. */
const SMALL = Array.from({ length: 16 }, (_v, i) => BigInt(i));

/** A block with its link fields present from the start (one object shape for every block). */
function block(start: bigint, end: bigint, insns: Insn[], stop: Block['stop']): Block {
  const links = { taken: undefined, fall: undefined, linkEpoch: -1 };
  return { start, end, insns, stop, ...links, patterns: undefined, patternEpoch: -1 };
}

/**
 * Decoded blocks keyed by start address (perf's intel_pt cache of
 * instruction walks, libipt's block cache). A text poke must drop every
 * block that overlaps the poked bytes — `invalidate(start, end)` does that
 * through a page index, so its cost depends on the blocks near the range,
 * not on the cache size.
 */
export class BlockCache {
  private readonly blocks = new Map<bigint, Block>();
  /** page number -> blocks with at least one byte in that page */
  private readonly pages = new Map<bigint, Set<Block>>();
  private readonly ins = new Instruction();
  readonly maxInsns: number;
  hits = 0;
  misses = 0;
  /** Moves whenever a block is dropped: links between blocks (Block.taken / fall) made before are void. */
  epoch = 0;

  constructor(
    private readonly read: CodeRead,
    opts: { maxInsns?: number } = {},
  ) {
    this.maxInsns = opts.maxInsns ?? 4096;
  }

  get size(): number {
    return this.blocks.size;
  }

  /** The block starting at `start`, decoded through `read` on a miss. */
  get(start: bigint): Block {
    const b = this.blocks.get(start);
    if (b) {
      this.hits++;
      return b;
    }
    this.misses++;
    const nb = this.decode(start);
    this.register(nb);
    return nb;
  }

  /**
   * Drops every block with a byte in [start, end) — and every block whose
   * decode stopped inside the range (an invalid/nomap stop at an address in
   * the range). Returns how many were dropped.
   */
  invalidate(start: bigint, end: bigint): number {
    if (end <= start) return 0;
    let n = 0;
    // a block may reach one instruction past its last byte when it stopped on 'invalid'/'nomap'
    const first = (start - BigInt(MAX_INSN)) >> PAGE_SHIFT;
    const last = (end - 1n) >> PAGE_SHIFT;
    for (let p = first < 0n ? 0n : first; p <= last; p++) {
      const s = this.pages.get(p);
      if (!s) continue;
      for (const b of s) {
        const reach = b.stop === 'invalid' || b.stop === 'nomap' ? b.end + BigInt(MAX_INSN) : b.end;
        const hiEnd = reach > b.start ? reach : b.start + 1n;
        if (b.start < end && hiEnd > start) {
          if (this.drop(b)) n++;
        }
      }
    }
    return n;
  }

  clear(): void {
    this.epoch++;
    this.blocks.clear();
    this.pages.clear();
  }

  private drop(b: Block): boolean {
    if (this.blocks.get(b.start) !== b) return false;
    this.epoch++;
    this.blocks.delete(b.start);
    const lastAddr = b.end > b.start ? b.end - 1n : b.start;
    for (let p = b.start >> PAGE_SHIFT, last = lastAddr >> PAGE_SHIFT; p <= last; p++) {
      const s = this.pages.get(p);
      if (s) {
        s.delete(b);
        if (s.size === 0) this.pages.delete(p);
      }
    }
    return true;
  }

  private register(nb: Block): void {
    this.blocks.set(nb.start, nb);
    const lastAddr = nb.end > nb.start ? nb.end - 1n : nb.start;
    for (let p = nb.start >> PAGE_SHIFT, last = lastAddr >> PAGE_SHIFT; p <= last; p++) {
      let s = this.pages.get(p);
      if (!s) {
        s = new Set();
        this.pages.set(p, s);
      }
      s.add(nb);
    }
  }

  /**
   * Decodes the block at `start`. While the wasm decoder still holds bytes
   * of the same chunk, it goes on with the fall-through blocks after it and
   * caches them too (a fall-through is the next block a flow decoder asks
   * for after a not-taken jcc or a call return), so one Decoder serves
   * several blocks. A speculative block that runs off the chunk is dropped.
   */
  private decode(start: bigint): Block {
    let first: Block | undefined;
    let insns: Insn[] = [];
    let bstart = start;
    let pos = start;
    const ins = this.ins;
    for (;;) {
      const bytes = this.read(pos, CHUNK);
      if (!bytes || bytes.length === 0) return first ?? block(start, pos, insns, 'nomap');
      const short = bytes.length < CHUNK;
      const d = new Decoder(64, bytes, DecoderOptions.None);
      try {
        d.ip = pos;
        // decode while a whole instruction surely fits in this chunk
        const safe = short ? bytes.length : bytes.length - MAX_INSN;
        let off = 0;
        while (off < safe) {
          d.decodeOut(ins);
          const t = codeClass(ins);
          if (!t) {
            // cut off at the end of readable memory, or really invalid bytes
            const stop = short && off + MAX_INSN > bytes.length ? 'nomap' : 'invalid';
            return first ?? block(start, pos, insns, stop);
          }
          const length = ins.length;
          // one object shape for every instruction (target undefined when there is none)
          const insn: Insn = {
            ip: pos,
            length,
            op: t.op,
            indirect: t.indirect,
            target: t.direct ? ins.nearBranchTarget : undefined,
            endsBlock: t.endsBlock,
          };
          insns.push(insn);
          pos += SMALL[length]!;
          off += length;
          if (t.endsBlock || insns.length >= this.maxInsns) {
            const b = block(bstart, pos, insns, t.endsBlock ? 'branch' : 'limit');
            if (!first) first = b;
            else this.register(b);
            if (this.blocks.has(pos)) return first;
            bstart = pos;
            insns = [];
          }
        }
        if (short) return first ?? block(start, pos, insns, 'nomap');
        if (first) return first;
      } finally {
        d.free();
      }
    }
  }
}
