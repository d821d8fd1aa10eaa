import type { CoreSegment } from './elf-core.js';
import { FormatError } from '../io/errors.js';
import { isKernelPoke, pokeEnd, type Poke } from './poke.js';
import {
  EMPTY,
  applyFast,
  prefix,
  versionAt,
  lowerBoundTime,
  upperBound,
  sortInApplyOrder,
  groupSites,
  type PlacedPoke,
  type Site,
} from './code-image-sites.js';

/**
 * The kernel's code as a function of time.
 *
 * perf keeps one copy of kernel text and overwrites it as TEXT_POKE events
 * arrive, so only "now" exists. Here every poked range keeps all of its
 * versions, so any time can be asked for, forwards or backwards, without a
 * replay:
 *
 *   base (kcore_dir/kcore, the text when recording started)
 *     └─ sites: maximal address ranges where pokes overlap
 *          states[0] = base of the site, states[k] = after its k-th poke
 *          times[k-1] = time of the k-th poke (non-decreasing)
 *
 * bytes at (addr, t) = base overlaid with, for each site hit, the state
 * after the pokes with time ≤ t (binary search: O(log n) per site hit).
 *
 * Switch point: at time ≥ poke.time the new bytes apply. The INT3 protocol
 * (docs/design.md) makes the event's time the one moment a CPU can switch from
 * old to new code.
 *
 * Equal times: perf delivers events in ordered-events order — by time, then
 * by position in the file — so pokes with the same timestamp apply in file
 * order, and a query at that time sees all of them applied.
 *
 * Bytes that no kcore segment holds are defined by the pokes themselves:
 * before the first poke that covers a byte, it holds that poke's old byte
 * (the old bytes make undo possible). A byte first reached by a poke's new
 * bytes only (a trampoline created with old_len 0, or a longer new_len) does
 * not exist before that poke; one removed (new_len 0, or a shorter new_len)
 * does not exist after. Reads return only bytes that exist.
 *
 * Only pokes perf applies go in: cpumode PERF_RECORD_MISC_KERNEL (others are
 * in `ignoredPokes`, for check to report).
 */
export interface CodeReader {
  /**
   * Up to `len` bytes at addr as a CPU saw them at `time` (default: the end
   * of the recording). Returns fewer (maybe 0) when the code stops existing
   * at some address. The result may be a view into the image: do not modify.
   */
  read(addr: bigint, len: number, time?: bigint): Uint8Array;
}

export type { PlacedPoke, Site } from './code-image-sites.js';

const NO_TIME_LIMIT = (1n << 63n) - 1n;

/** Bound on the image's version tables (see build). */
export const MAX_IMAGE_BYTES = 1 << 30;

export class CodeImage implements CodeReader {
  readonly segments: readonly CoreSegment[];
  readonly sites: readonly Site[];
  /** Every applied poke, in apply order. */
  readonly pokes: readonly PlacedPoke[];
  /** Pokes perf would not apply (non-kernel cpumode), in input order. */
  readonly ignoredPokes: readonly Poke[];
  private readonly segStarts: bigint[];
  private readonly siteStarts: bigint[];

  private constructor(segments: CoreSegment[], sites: Site[], pokes: PlacedPoke[], ignored: Poke[]) {
    this.segments = segments;
    this.sites = sites;
    this.pokes = pokes;
    this.ignoredPokes = ignored;
    this.segStarts = segments.map((s) => s.vaddr);
    this.siteStarts = sites.map((s) => s.start);
  }

  /**
   * Build the image from base segments (kcore; may be empty) and pokes in
   * any order. Throws FormatError 'unsupported' (at the first poke of the
   * site) when overlapping pokes would need version tables over
   * MAX_IMAGE_BYTES — only a crafted file can ask for that. Cost: O(n log n)
   * for n pokes (a sort, skipped when they come already in time order) plus
   * O(total poked bytes).
   */
  static build(segments: CoreSegment[], pokes: Iterable<Poke>): CodeImage {
    const segs = [...segments].sort((a, b) => (a.vaddr < b.vaddr ? -1 : a.vaddr > b.vaddr ? 1 : 0));
    const applied: Poke[] = [];
    const ignored: Poke[] = [];
    for (const p of pokes) {
      if (!isKernelPoke(p)) ignored.push(p);
      else if (p.oldBytes.length + p.newBytes.length > 0) applied.push(p);
    }
    sortInApplyOrder(applied);
    const sites = groupSites(applied);
    const img = new CodeImage(segs, [], [], ignored);
    // apply order → (site, k), so the flat list is built by appending (a
    // large pre-sized array filled out of order would go to dictionary mode)
    const siteOf = new Int32Array(applied.length);
    const kOf = new Int32Array(applied.length);
    // each site stores (pokes + 1) × width bytes (twice when code appears or
    // disappears): refuse inputs that would need more than MAX_IMAGE_BYTES
    // instead of allocating it (real sites are a few bytes, trampolines a few KiB)
    let total = 0;
    for (const g of sites) {
      total += (g.members.length + 1) * Number(g.end - g.start) * 2;
      if (total > MAX_IMAGE_BYTES) {
        const p = applied[g.members[0]!]!;
        throw new FormatError({
          kind: 'unsupported',
          offset: p.fileOffset,
          structure: 'TEXT_POKE (20)',
          actual: `${g.members.length} pokes over ${g.end - g.start} overlapping bytes at 0x${g.start.toString(16)}`,
          expected: `a code image under ${MAX_IMAGE_BYTES >> 20} MiB`,
        });
      }
    }
    sites.forEach((g, si) => {
      g.members.forEach((i, k) => {
        siteOf[i] = si;
        kOf[i] = k;
      });
    });
    // Most sites lie inside kcore and every poke there keeps its length (jump
    // labels, static calls): their rows are filled in one pass in apply order,
    // which walks the pokes in the order they sit in memory. Walking site by
    // site instead jumps across the whole poke list, and on a million pokes
    // the cache misses cost more than the work. Other sites (code that
    // appears or disappears, bytes kcore lacks) take fillSite.
    const slow = new Uint8Array(sites.length);
    for (let i = 0; i < applied.length; i++) {
      const p = applied[i]!;
      if (p.oldBytes.length !== p.newBytes.length) slow[siteOf[i]!] = 1;
    }
    const fast: (Site | undefined)[] = new Array(sites.length);
    sites.forEach((g, si) => {
      if (!slow[si]) {
        const site = img.fastSite(g.start, g.end, g.members.length);
        if (site) {
          g.site = site;
          fast[si] = site;
          return;
        }
      }
      g.site = img.fillSite(g.start, g.end, g.members, applied);
    });
    const placed: PlacedPoke[] = [];
    for (let i = 0; i < applied.length; i++) {
      const si = siteOf[i]!;
      const k = kOf[i]!;
      const site = fast[si];
      if (site) placed.push(applyFast(site, applied[i]!, i, k));
      else placed.push(sites[si]!.site!.pokes[k]!);
    }
    return new CodeImage(
      segs,
      sites.map((g) => g.site!),
      placed,
      ignored,
    );
  }

  /**
   * A site whose base bytes kcore holds entirely, rows not yet filled (see
   * applyFast); undefined when kcore lacks some byte (fillSite decides those).
   */
  private fastSite(start: bigint, end: bigint, n: number): Site | undefined {
    const width = Number(end - start);
    const states = new Uint8Array((n + 1) * width);
    const known = new Uint8Array(width);
    this.copyBase(start, width, states, known);
    for (let j = 0; j < width; j++) if (!known[j]) return undefined;
    return {
      start,
      end,
      pokes: new Array<PlacedPoke>(n),
      times: new BigInt64Array(n),
      timesF: new Float64Array(n),
      states,
      live: null,
    };
  }

  /** End of the recording for queries: after every poke. */
  static readonly END = NO_TIME_LIMIT;

  private fillSite(start: bigint, end: bigint, members: number[], applied: Poke[]): Site {
    const width = Number(end - start);
    const n = members.length;
    const states = new Uint8Array((n + 1) * width);
    const known = new Uint8Array(width);
    // base from kcore
    this.copyBase(start, width, states, known);
    // bytes kcore lacks: the first poke covering a byte defines it; a byte
    // first reached by new bytes only does not exist before that poke
    let allLive = true;
    const deadAtStart: number[] = [];
    for (let k = 0; k < n; k++) {
      const p = applied[members[k]!]!;
      const ol = p.oldBytes.length;
      const nl = p.newBytes.length;
      if (ol !== nl) allLive = false;
      const off = Number(p.addr - start);
      const span = Math.max(ol, nl);
      for (let j = 0; j < span; j++) {
        if (known[off + j]) continue;
        known[off + j] = 1;
        if (j < ol) states[off + j] = p.oldBytes[j]!;
        else {
          allLive = false;
          deadAtStart.push(off + j);
        }
      }
    }
    const liveRows = allLive ? null : new Uint8Array((n + 1) * width);
    if (liveRows) {
      // row 0: every known byte exists except those first written by new bytes
      liveRows.set(known);
      for (const j of deadAtStart) liveRows[j] = 0;
    }
    const times = new BigInt64Array(n);
    const timesF = new Float64Array(n);
    const placed: PlacedPoke[] = new Array(n);
    const site: Site = { start, end, pokes: placed, times, timesF, states, live: liveRows };
    for (let k = 0; k < n; k++) {
      const i = members[k]!;
      const p = applied[i]!;
      const prev = k * width;
      const row = prev + width;
      // small sites (the usual 2–5 bytes) copy in JS: cheaper than a native call
      if (width <= 32) for (let j = 0; j < width; j++) states[row + j] = states[prev + j]!;
      else states.copyWithin(row, prev, row);
      const off = n === 1 || p.addr === start ? 0 : Number(p.addr - start);
      const old = p.oldBytes;
      const nb = p.newBytes;
      const ol = old.length;
      const nl = nb.length;
      let ok = true;
      for (let j = 0; j < ol; j++) if (states[prev + off + j] !== old[j]) ok = false;
      for (let j = 0; j < nl; j++) states[row + off + j] = nb[j]!;
      if (liveRows) {
        liveRows.copyWithin(row, prev, row);
        for (let j = 0; j < ol; j++) if (!liveRows[prev + off + j]) ok = false;
        liveRows.fill(1, row + off, row + off + nl);
        if (ol > nl) {
          states.fill(0, row + off + nl, row + off + ol);
          liveRows.fill(0, row + off + nl, row + off + ol);
        }
      }
      times[k] = p.time;
      timesF[k] = Number(p.time);
      placed[k] = { poke: p, seq: i, site, k, consistent: ok };
    }
    return site;
  }

  /**
   * What the image held over [addr, addr+old_len) just before a poke (the
   * bytes its old bytes are checked against); live[j] = 0 where no code existed.
   */
  static bytesBefore(pp: PlacedPoke): { bytes: Uint8Array; live: Uint8Array } {
    const s = pp.site;
    const width = Number(s.end - s.start);
    const at = pp.k * width + Number(pp.poke.addr - s.start);
    const ol = pp.poke.oldBytes.length;
    return {
      bytes: s.states.slice(at, at + ol),
      live: s.live ? s.live.slice(at, at + ol) : new Uint8Array(ol).fill(1),
    };
  }

  /** Copy kcore bytes over [start, start+width) into out; mark them in known. */
  private copyBase(start: bigint, width: number, out: Uint8Array, known: Uint8Array, outOff = 0): void {
    const end = start + BigInt(width);
    let i = Math.max(0, upperBound(this.segStarts, start) - 1);
    for (; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      if (s.vaddr >= end) break;
      const sEnd = s.vaddr + BigInt(s.bytes.length);
      if (sEnd <= start) continue;
      const from = s.vaddr > start ? s.vaddr : start;
      const to = sEnd < end ? sEnd : end;
      const src = Number(from - s.vaddr);
      const dst = Number(from - start);
      const n = Number(to - from);
      out.set(s.bytes.subarray(src, src + n), outOff + dst);
      known.fill(1, outOff + dst, outOff + dst + n);
    }
  }

  /**
   * Bytes over [addr, addr+len) at `time` with a mask of which exist
   * (1 = exists). Cost: O(log segments + log sites + Σ log pokes of each site hit + len).
   */
  bytesAt(addr: bigint, len: number, time: bigint = NO_TIME_LIMIT): { bytes: Uint8Array; live: Uint8Array } {
    const bytes = new Uint8Array(len);
    const live = new Uint8Array(len);
    this.copyBase(addr, len, bytes, live);
    this.overlay(addr, len, time, bytes, live);
    return { bytes, live };
  }

  read(addr: bigint, len: number, time: bigint = NO_TIME_LIMIT): Uint8Array {
    const end = addr + BigInt(len);
    let si = this.firstSiteEndingAfter(addr);
    const site = this.sites[si];
    const hitsSite = !!site && site.start < end;
    const gi = upperBound(this.segStarts, addr) - 1;
    const seg = this.segments[gi];
    let baseN = 0; // bytes of [addr, addr+len) the segment holds
    let o = 0;
    if (seg) {
      const off = addr - seg.vaddr;
      if (off < BigInt(seg.bytes.length)) {
        o = Number(off);
        baseN = Math.min(len, seg.bytes.length - o);
      }
    }
    const next = this.segments[gi + 1];
    const spans = baseN < len && !!next && next.vaddr < end;
    // hot path: a view into kcore
    if (!hitsSite && !spans) return seg && baseN > 0 ? seg.bytes.subarray(o, o + baseN) : EMPTY;
    if (spans) {
      const { bytes, live } = this.bytesAt(addr, len, time);
      return prefix(bytes, live, len);
    }
    // one segment (or none) plus the sites in range
    const out = new Uint8Array(len);
    if (baseN > 0) out.set(seg!.bytes.subarray(o, o + baseN));
    let live: Uint8Array | undefined;
    if (baseN < len) {
      live = new Uint8Array(len);
      live.fill(1, 0, baseN);
    }
    const tf = Number(time);
    for (; si < this.sites.length; si++) {
      const s = this.sites[si]!;
      if (s.start >= end) break;
      const k = versionAt(s, time, tf);
      const width = Number(s.end - s.start);
      const rel = Number(s.start - addr); // may be negative: the site starts before addr
      const from = Math.max(rel, 0);
      const to = Math.min(len, rel + width);
      const src = k * width + (from - rel);
      for (let j = from; j < to; j++) out[j] = s.states[src + j - from]!;
      if (s.live) {
        live ??= new Uint8Array(len).fill(1, 0, baseN);
        for (let j = from; j < to; j++) live[j] = s.live[src + j - from]!;
      } else if (live) live.fill(1, from, to);
    }
    return live ? prefix(out, live, len) : out;
  }

  private overlay(addr: bigint, len: number, time: bigint, bytes: Uint8Array, live: Uint8Array): void {
    const end = addr + BigInt(len);
    for (let i = this.firstSiteEndingAfter(addr); i < this.sites.length; i++) {
      const s = this.sites[i]!;
      if (s.start >= end) break;
      const k = versionAt(s, time);
      const width = Number(s.end - s.start);
      const from = s.start > addr ? s.start : addr;
      const to = s.end < end ? s.end : end;
      const srcOff = k * width + Number(from - s.start);
      const dst = Number(from - addr);
      const n = Number(to - from);
      bytes.set(s.states.subarray(srcOff, srcOff + n), dst);
      if (s.live) live.set(s.live.subarray(srcOff, srcOff + n), dst);
      else live.fill(1, dst, dst + n);
    }
  }

  private firstSiteEndingAfter(addr: bigint): number {
    // sites are disjoint and sorted, so ends are sorted too
    let i = upperBound(this.siteStarts, addr) - 1;
    if (i < 0) return 0;
    if (this.sites[i]!.end <= addr) i++;
    return i;
  }

  /** The site containing addr, if any poke ever touched it. */
  siteAt(addr: bigint): Site | undefined {
    const s = this.sites[this.firstSiteEndingAfter(addr)];
    return s && s.start <= addr ? s : undefined;
  }

  /**
   * Pokes touching [start, end) with t0 ≤ time ≤ t1, in apply order.
   * Cost: O(log sites + Σ (log pokes + hits) per site in range).
   */
  pokesIn(start: bigint, end: bigint, t0: bigint = -NO_TIME_LIMIT, t1: bigint = NO_TIME_LIMIT): PlacedPoke[] {
    const out: PlacedPoke[] = [];
    for (let i = this.firstSiteEndingAfter(start); i < this.sites.length; i++) {
      const s = this.sites[i]!;
      if (s.start >= end) break;
      for (let k = lowerBoundTime(s.times, t0); k < s.pokes.length && s.times[k]! <= t1; k++) {
        const p = s.pokes[k]!;
        if (p.poke.addr < end && pokeEnd(p.poke) > start) out.push(p);
      }
    }
    if (out.length > 1) out.sort((a, b) => a.seq - b.seq);
    return out;
  }

  /** True when addr lies in a kcore segment. */
  inBase(addr: bigint): boolean {
    const s = this.segments[upperBound(this.segStarts, addr) - 1];
    return !!s && addr < s.vaddr + BigInt(s.bytes.length);
  }
}
