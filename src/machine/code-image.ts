import type { CoreSegment } from './elf-core.js';
import { FormatError } from '../io/errors.js';
import { pokeEnd, type Poke } from './poke.js';
import { PokeStore } from './poke-store.js';
import {
  EMPTY,
  prefix,
  versionAt,
  lowerBoundTime,
  upperBound,
  applyOrder,
  groupSites,
  fillTimes,
  ImageSite,
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

/** Index of x in the sorted a (present). */
function indexOf(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Bound on the image's version tables (see build). */
export const MAX_IMAGE_BYTES = 1 << 30;

export class CodeImage implements CodeReader {
  readonly segments: readonly CoreSegment[];
  readonly sites: readonly Site[] = [];
  /** The pokes, as columns: every input poke, applied or not. */
  readonly store: PokeStore;
  /** Apply order (time, then file order): order[seq] = the store index of the seq-th applied poke. */
  readonly order: Int32Array;
  /** Per seq: index of its site in `sites`, and whether it is consistent (1). */
  readonly siteOf: Int32Array;
  readonly consistentAt: Uint8Array;
  /** Store indices of the pokes perf would not apply (non-kernel cpumode), in input order. */
  readonly ignored: Int32Array;
  private readonly segStarts: bigint[];
  private siteStarts: bigint[] = [];
  private placed: (PlacedPoke | undefined)[] = [];
  private allPlaced: PlacedPoke[] | undefined;

  private constructor(
    segments: CoreSegment[],
    store: PokeStore,
    order: Int32Array,
    ignored: Int32Array,
    siteOf: Int32Array,
  ) {
    this.segments = segments;
    this.store = store;
    this.order = order;
    this.ignored = ignored;
    this.siteOf = siteOf;
    this.consistentAt = new Uint8Array(order.length);
    this.segStarts = segments.map((s) => s.vaddr);
  }

  /** Every applied poke, in apply order (objects made on first use: on big inputs prefer the columns). */
  get pokes(): readonly PlacedPoke[] {
    if (!this.allPlaced) {
      const out: PlacedPoke[] = [];
      for (let q = 0; q < this.order.length; q++) out.push(this.placedAt(q));
      this.allPlaced = out;
    }
    return this.allPlaced;
  }

  /** Pokes perf would not apply (non-kernel cpumode), in input order. */
  get ignoredPokes(): readonly Poke[] {
    return Array.from(this.ignored, (i) => this.store.poke(i));
  }

  /** The seq-th applied poke as an object (the same object on every call). */
  placedAt(seq: number): PlacedPoke {
    const hit = this.placed[seq];
    if (hit) return hit;
    const site = this.sites[this.siteOf[seq]!]!;
    const pp: PlacedPoke = {
      poke: this.store.poke(this.order[seq]!),
      seq,
      site,
      k: indexOf(site.members, seq),
      consistent: this.consistentAt[seq] === 1,
    };
    this.placed[seq] = pp;
    return pp;
  }

  /**
   * Build the image from base segments (kcore; may be empty) and pokes in
   * any order (objects, or a PokeStore's columns). Throws FormatError
   * 'unsupported' (at the first poke of the site) when overlapping pokes
   * would need version tables over MAX_IMAGE_BYTES — only a crafted file can
   * ask for that. Cost: O(n log n) for n pokes (a sort, skipped when they
   * come already in time order) plus O(total poked bytes).
   */
  static build(segments: CoreSegment[], pokes: Iterable<Poke> | PokeStore): CodeImage {
    const segs = [...segments].sort((a, b) => (a.vaddr < b.vaddr ? -1 : a.vaddr > b.vaddr ? 1 : 0));
    const st = pokes instanceof PokeStore ? pokes : PokeStore.of(pokes);
    const { order, ignored } = applyOrder(st);
    const g = groupSites(st, order);
    const img = new CodeImage(segs, st, order, ignored, g.siteOf);
    // each site stores (pokes + 1) × width bytes (twice when code appears or
    // disappears): refuse inputs that would need more than MAX_IMAGE_BYTES
    // instead of allocating it (real sites are a few bytes, trampolines a few KiB)
    let total = 0;
    const nSites = g.starts.length;
    for (let s = 0; s < nSites; s++) {
      const n = g.first[s + 1]! - g.first[s]!;
      const width = g.ends[s]! - g.starts[s]!;
      total += (n + 1) * Number(width) * 2;
      if (total > MAX_IMAGE_BYTES) {
        throw new FormatError({
          kind: 'unsupported',
          offset: st.fileOffset[order[g.members[g.first[s]!]!]!]!,
          structure: 'TEXT_POKE (20)',
          actual: `${n} pokes over ${width} overlapping bytes at 0x${g.starts[s]!.toString(16)}`,
          expected: `a code image under ${MAX_IMAGE_BYTES >> 20} MiB`,
        });
      }
    }
    // Most sites lie inside kcore and every poke there keeps its length (jump
    // labels, static calls): their rows are filled in one pass in apply order
    // (fillFast). Other sites (code that appears or disappears, bytes kcore
    // lacks) take fillSite.
    const slow = new Uint8Array(nSites);
    for (let q = 0; q < order.length; q++) {
      const i = order[q]!;
      if (st.oldLen[i] !== st.newLen[i]) slow[g.siteOf[q]!] = 1;
    }
    // one buffer each for the rows, times and widths of all sites (a site's
    // arrays are views into them): the row pass below then touches a few
    // small arrays per poke, not a scattered object and array per site
    const width = new Int32Array(nSites);
    const base = new Float64Array(nSites + 1);
    for (let s = 0; s < nSites; s++) {
      width[s] = Number(g.ends[s]! - g.starts[s]!);
      base[s + 1] = base[s]! + (slow[s] ? 0 : (g.first[s + 1]! - g.first[s]! + 1) * width[s]!);
    }
    const rows = new Uint8Array(base[nSites]!);
    const timesF = new Float64Array(order.length);
    fillTimes(st, order, g.posOf, timesF);
    const sites: Site[] = [];
    const known = new Uint8Array(width.reduce((m, w) => Math.max(m, w), 0));
    const cols = { members: g.members, timesF, rows };
    for (let s = 0; s < nSites; s++) {
      const start = g.starts[s]!;
      const w = width[s]!;
      const first = g.first[s]!;
      const n = g.first[s + 1]! - first;
      if (!slow[s]) {
        // kcore must hold every byte of the site: else fillSite decides them
        known.fill(0, 0, w);
        img.copyBase(start, w, rows.subarray(base[s]!, base[s]! + w), known);
        if (known.subarray(0, w).every((x) => x === 1)) {
          sites.push(new ImageSite(img, start, g.ends[s]!, cols, first, n, base[s]!, null));
          continue;
        }
        slow[s] = 1;
      }
      sites.push(img.fillSite(start, g.ends[s]!, { members: g.members, timesF }, first, n));
    }
    (img as { sites: readonly Site[] }).sites = sites;
    img.siteStarts = g.starts;
    img.fillFast(slow, rows, base, width);
    return img;
  }

  /**
   * Rows of the fast sites: row k+1 from row k and the site's k-th poke, in
   * one pass in apply order (the order the columns sit in memory). Site s's
   * rows are rows[base[s] ..], width[s] bytes each.
   */
  private fillFast(slow: Uint8Array, rows: Uint8Array, base: Float64Array, width: Int32Array): void {
    const st = this.store;
    const bytes = st.bytes;
    // site starts as u32 halves, so a poke's offset in its site needs no bigint
    const sHi = new Float64Array(this.sites.length);
    const sLo = new Float64Array(this.sites.length);
    // how many of each site's pokes are applied so far: the row the next one starts from
    const kNext = new Int32Array(this.sites.length);
    this.sites.forEach((s, si) => {
      sHi[si] = Number(s.start >> 32n);
      sLo[si] = Number(s.start & 0xffffffffn);
    });
    for (let q = 0; q < this.order.length; q++) {
      const si = this.siteOf[q]!;
      if (slow[si]) continue;
      const i = this.order[q]!;
      const w = width[si]!;
      const prev = base[si]! + kNext[si]!++ * w;
      const row = prev + w;
      // small sites (the usual 2–5 bytes) copy in JS: cheaper than a native call
      if (w <= 32) for (let j = 0; j < w; j++) rows[row + j] = rows[prev + j]!;
      else rows.copyWithin(row, prev, row);
      const al = st.addrLo[i]!;
      const off =
        st.addrHi[i] === sHi[si] && al >= sLo[si]! ? al - sLo[si]! : Number(st.addr(i) - this.sites[si]!.start);
      const oo = st.oldOff[i]!;
      const ol = st.oldLen[i]!;
      const no = st.newOff[i]!;
      const nl = st.newLen[i]!;
      let ok = 1;
      for (let j = 0; j < ol; j++) if (rows[prev + off + j] !== bytes[oo + j]) ok = 0;
      for (let j = 0; j < nl; j++) rows[row + off + j] = bytes[no + j]!;
      this.consistentAt[q] = ok;
    }
  }

  /** End of the recording for queries: after every poke. */
  static readonly END = NO_TIME_LIMIT;

  /** A site whose pokes are cols.members[first, first + n), with rows of its own. */
  private fillSite(
    start: bigint,
    end: bigint,
    cols: { members: Int32Array; timesF: Float64Array },
    first: number,
    n: number,
  ): Site {
    const st = this.store;
    const width = Number(end - start);
    const members = cols.members.subarray(first, first + n);
    const states = new Uint8Array((n + 1) * width);
    const known = new Uint8Array(width);
    // base from kcore
    this.copyBase(start, width, states, known);
    // bytes kcore lacks: the first poke covering a byte defines it; a byte
    // first reached by new bytes only does not exist before that poke
    let allLive = true;
    const deadAtStart: number[] = [];
    for (let k = 0; k < n; k++) {
      const i = this.order[members[k]!]!;
      const ol = st.oldLen[i]!;
      const nl = st.newLen[i]!;
      const old = st.oldBytes(i);
      if (ol !== nl) allLive = false;
      const off = Number(st.addr(i) - start);
      const span = Math.max(ol, nl);
      for (let j = 0; j < span; j++) {
        if (known[off + j]) continue;
        known[off + j] = 1;
        if (j < ol) states[off + j] = old[j]!;
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
    const site = new ImageSite(this, start, end, { ...cols, rows: states }, first, n, 0, liveRows);
    for (let k = 0; k < n; k++) {
      const q = members[k]!;
      const i = this.order[q]!;
      const prev = k * width;
      const row = prev + width;
      if (width <= 32) for (let j = 0; j < width; j++) states[row + j] = states[prev + j]!;
      else states.copyWithin(row, prev, row);
      const off = Number(st.addr(i) - start);
      const old = st.oldBytes(i);
      const nb = st.newBytes(i);
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
      this.consistentAt[q] = ok ? 1 : 0;
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
      for (let k = lowerBoundTime(s.times, t0); k < s.members.length && s.times[k]! <= t1; k++) {
        const p = this.placedAt(s.members[k]!);
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
