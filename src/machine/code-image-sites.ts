/**
 * The code image's inner workings, apart from its public class: the apply
 * order (time, then file order), grouping pokes into sites (overlapping
 * ranges merge), and the binary searches that find the version of a site at
 * a time. Everything works on the columns of a PokeStore (poke-store.ts):
 * indices and typed arrays, no object or bigint per poke.
 */
import { PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL } from '../abi/record-type.js';
import type { Poke } from './poke.js';
import type { PokeStore } from './poke-store.js';

/** A poke once placed in the image. */
export interface PlacedPoke {
  poke: Poke;
  /** Position in apply order (time, then file order). */
  seq: number;
  site: Site;
  /** Index in site.pokes: the image before it is states row k. */
  k: number;
  /** Whether its old bytes equal what the image held there just before it (see CodeImage.bytesBefore). */
  consistent: boolean;
}

export interface Site {
  start: bigint;
  end: bigint;
  /** Pokes of this site in apply order (built on first use: see members). */
  readonly pokes: PlacedPoke[];
  /** The apply-order positions (seq) of the site's pokes, in apply order. */
  readonly members: Int32Array;
  /** time of pokes[k] at k (sorted; made on first use from the store: searches read timesF). */
  readonly times: BigInt64Array;
  /** The same times as doubles (rounded, still sorted): searched first, so reads allocate no bigints. */
  readonly timesF: Float64Array;
  /** (pokes.length + 1) rows of (end - start) bytes: row k = after k pokes. */
  readonly states: Uint8Array;
  /** Same shape, 1 = byte exists; null when every byte always exists. */
  readonly live: Uint8Array | null;
}

/** What a site needs of its image: its pokes as objects, and their exact times. */
export interface SiteImage {
  placedAt(seq: number): PlacedPoke;
  readonly store: PokeStore;
  readonly order: Int32Array;
}

/** The buffers the sites' arrays are views into: a site holds its range of each. */
export interface SiteColumns {
  /** Every site's members, site after site. */
  members: Int32Array;
  /** Their times as doubles, in the same places. */
  timesF: Float64Array;
  /** Rows of states (see Site.states). */
  rows: Uint8Array;
}

/**
 * A site of the image: its arrays are views made on first use (three typed
 * array objects per site otherwise: ~6 MB on 16 k sites, and enough to grow
 * the young generation to its largest while the image is built), its pokes
 * as PlacedPoke objects and their bigint times too (the times only settle
 * ties between times past 2^53 ns and serve time-bounded pokesIn: 8 bytes a
 * poke otherwise).
 */
export class ImageSite implements Site {
  private placed: PlacedPoke[] | undefined;
  private exactTimes: BigInt64Array | undefined;
  private membersView: Int32Array | undefined;
  private timesView: Float64Array | undefined;
  private statesView: Uint8Array | undefined;
  /**
   * `first`, `count`: the site's range of cols.members and cols.timesF;
   * `rowsAt`: where its (count + 1) rows start in cols.rows.
   */
  constructor(
    private readonly image: SiteImage,
    readonly start: bigint,
    readonly end: bigint,
    private readonly cols: SiteColumns,
    private readonly first: number,
    private readonly count: number,
    private readonly rowsAt: number,
    readonly live: Uint8Array | null,
  ) {}
  get members(): Int32Array {
    this.membersView ??= this.cols.members.subarray(this.first, this.first + this.count);
    return this.membersView;
  }
  get timesF(): Float64Array {
    this.timesView ??= this.cols.timesF.subarray(this.first, this.first + this.count);
    return this.timesView;
  }
  get states(): Uint8Array {
    this.statesView ??= this.cols.rows.subarray(
      this.rowsAt,
      this.rowsAt + (this.count + 1) * Number(this.end - this.start),
    );
    return this.statesView;
  }
  get pokes(): PlacedPoke[] {
    this.placed ??= Array.from(this.members, (q) => this.image.placedAt(q));
    return this.placed;
  }
  get times(): BigInt64Array {
    if (!this.exactTimes) {
      const { store, order } = this.image;
      const t = new BigInt64Array(this.count);
      const halves = new Uint32Array(t.buffer);
      for (let k = 0; k < t.length; k++) {
        const i = order[this.cols.members[this.first + k]!]!;
        halves[2 * k + LO_AT] = store.timeLo[i]!;
        halves[2 * k + 1 - LO_AT] = store.timeHi[i]!;
      }
      this.exactTimes = t;
    }
    return this.exactTimes;
  }
}

/** Where a u64's low u32 half sits in memory. */
const LO_AT = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1 ? 0 : 1;

/**
 * Every site's times as doubles from the store's halves, no bigint per poke.
 * Walks the pokes in apply order (the columns' order) and writes each at its
 * place: posOf[q] = q's index in members.
 */
export function fillTimes(st: PokeStore, order: Int32Array, posOf: Int32Array, timesF: Float64Array): void {
  for (let q = 0; q < order.length; q++) timesF[posOf[q]!] = st.timeF(order[q]!);
}

export const EMPTY = new Uint8Array(0);

export function prefix(bytes: Uint8Array, live: Uint8Array, len: number): Uint8Array {
  let n = 0;
  while (n < len && live[n]) n++;
  return n === len ? bytes : bytes.subarray(0, n);
}

/**
 * Number of the site's pokes with time ≤ t: the row to read. Searches the
 * double copy (rounding keeps order: a < b ⇒ double(a) ≤ double(b)), then
 * settles ties between times that round alike with exact comparisons.
 */
export function versionAt(s: Site, t: bigint, tf: number = Number(t)): number {
  const a = s.timesF;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= tf) lo = mid + 1;
    else hi = mid;
  }
  // below 2^53 a double is exact: equal doubles are equal times
  if (tf < 2 ** 53 && tf > -(2 ** 53)) return lo;
  while (lo > 0 && a[lo - 1] === tf && s.times[lo - 1]! > t) lo--;
  return lo;
}

export function lowerBoundTime(a: BigInt64Array, t: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element > x. */
export function upperBound(a: bigint[], x: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The kernel pokes (cpumode KERNEL) that change bytes, in apply order: perf's
 * ordered-events order, time then file offset.
 */
export function applyOrder(st: PokeStore): { order: Int32Array; ignored: Int32Array } {
  let nIgnored = 0;
  let nApplied = 0;
  const kernel = (i: number): boolean => (st.misc[i]! & PERF_RECORD_MISC_CPUMODE_MASK) === PERF_RECORD_MISC_KERNEL;
  for (let i = 0; i < st.length; i++) {
    if (!kernel(i)) nIgnored++;
    else if (st.oldLen[i]! + st.newLen[i]! > 0) nApplied++;
  }
  const o = new Int32Array(nApplied);
  const ignored = new Int32Array(nIgnored);
  let a = 0;
  let g = 0;
  for (let i = 0; i < st.length; i++) {
    if (!kernel(i)) ignored[g++] = i;
    else if (st.oldLen[i]! + st.newLen[i]! > 0) o[a++] = i;
  }
  const before = (i: number, j: number): number => st.cmpTime(i, j) || st.fileOffset[i]! - st.fileOffset[j]! || i - j;
  let sorted = true;
  for (let k = 1; k < o.length && sorted; k++) if (before(o[k - 1]!, o[k]!) > 0) sorted = false;
  if (!sorted) o.sort(before);
  return { order: o, ignored };
}

/** Disjoint sites in address order: where their pokes touch, and which pokes (seqs, in apply order) are theirs. */
export interface SiteGroups {
  starts: bigint[];
  ends: bigint[];
  /** Site of each seq. */
  siteOf: Int32Array;
  /** Members of site s: members[first[s] .. first[s + 1]). */
  first: Int32Array;
  members: Int32Array;
  /** Index of each seq in members. */
  posOf: Int32Array;
}

/** Merge overlapping poke ranges into disjoint sites. O(n) over the pokes plus a sort of the distinct addresses. */
export function groupSites(st: PokeStore, order: Int32Array): SiteGroups {
  // distinct addresses in an open-addressing table over the u32 halves (no map entry, no
  // string, no heap number per poke); slot = group + 1, 0 = empty; grown at half full
  let slots = new Int32Array(1 << 12);
  let mask = slots.length - 1;
  const gHi: number[] = [];
  const gLo: number[] = [];
  const gSpan: number[] = [];
  const slotOf = (hi: number, lo: number): number => {
    let x = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 7) & mask;
    for (;;) {
      const g = slots[x]! - 1;
      if (g < 0 || (gLo[g] === lo && gHi[g] === hi)) return x;
      x = (x + 1) & mask;
    }
  };
  const groupOf = new Int32Array(order.length);
  for (let q = 0; q < order.length; q++) {
    const i = order[q]!;
    const hi = st.addrHi[i]!;
    const lo = st.addrLo[i]!;
    let x = slotOf(hi, lo);
    let g = slots[x]! - 1;
    if (g < 0) {
      g = gHi.length;
      gHi.push(hi);
      gLo.push(lo);
      gSpan.push(0);
      slots[x] = g + 1;
      if (2 * gHi.length > slots.length) {
        slots = new Int32Array(slots.length * 2);
        mask = slots.length - 1;
        for (let k = 0; k < gHi.length; k++) {
          x = slotOf(gHi[k]!, gLo[k]!);
          slots[x] = k + 1;
        }
      }
    }
    const span = st.span(i);
    if (span > gSpan[g]!) gSpan[g] = span;
    groupOf[q] = g;
  }
  const n = gHi.length;
  const byAddr = Array.from({ length: n }, (_, g) => g).sort((a, b) => gHi[a]! - gHi[b]! || gLo[a]! - gLo[b]!);
  const siteOfGroup = new Int32Array(n);
  const starts: bigint[] = [];
  const ends: bigint[] = [];
  for (const g of byAddr) {
    const a = (BigInt(gHi[g]!) << 32n) | BigInt(gLo[g]!);
    const e = a + BigInt(gSpan[g]!);
    const last = ends.length - 1;
    if (last >= 0 && a < ends[last]!) {
      if (e > ends[last]!) ends[last] = e;
    } else {
      starts.push(a);
      ends.push(e);
    }
    siteOfGroup[g] = starts.length - 1;
  }
  // members by site, in apply order (a counting sort over seq)
  const siteOf = new Int32Array(order.length);
  const first = new Int32Array(starts.length + 1);
  for (let q = 0; q < order.length; q++) {
    const s = siteOfGroup[groupOf[q]!]!;
    siteOf[q] = s;
    first[s + 1] = first[s + 1]! + 1;
  }
  for (let s = 0; s < starts.length; s++) first[s + 1] = first[s + 1]! + first[s]!;
  const fill = first.slice(0, starts.length);
  const members = new Int32Array(order.length);
  const posOf = new Int32Array(order.length);
  for (let q = 0; q < order.length; q++) {
    const s = siteOf[q]!;
    const x = fill[s]!;
    members[x] = q;
    posOf[q] = x;
    fill[s] = x + 1;
  }
  return { starts, ends, siteOf, first, members, posOf };
}
