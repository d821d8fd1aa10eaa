/**
 * The code image's inner workings, apart from its public class: grouping
 * pokes into sites (overlapping ranges merge), the apply order (time, then
 * file order), filling a site's rows in one pass, and the binary searches
 * that find the version of a site at a time.
 */
import type { Poke } from './poke.js';

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
  /** Pokes of this site in apply order. */
  pokes: PlacedPoke[];
  /** time of pokes[k] at k (sorted). */
  times: BigInt64Array;
  /** The same times as doubles (rounded, still sorted): searched first, so reads allocate no bigints. */
  timesF: Float64Array;
  /** (pokes.length + 1) rows of (end - start) bytes: row k = after k pokes. */
  states: Uint8Array;
  /** Same shape, 1 = byte exists; null when every byte always exists. */
  live: Uint8Array | null;
}

export const EMPTY = new Uint8Array(0);

/**
 * Row k+1 of a fast site (every byte exists, the poke keeps its length) from
 * row k and the site's k-th poke: what fillSite does for such sites.
 */
export function applyFast(site: Site, p: Poke, seq: number, k: number): PlacedPoke {
  const states = site.states;
  const width = site.pokes.length === 0 ? 0 : states.length / (site.pokes.length + 1);
  const prev = k * width;
  const row = prev + width;
  if (width <= 32) for (let j = 0; j < width; j++) states[row + j] = states[prev + j]!;
  else states.copyWithin(row, prev, row);
  const off = p.addr === site.start ? 0 : Number(p.addr - site.start);
  const old = p.oldBytes;
  const nb = p.newBytes;
  let ok = true;
  for (let j = 0; j < old.length; j++) if (states[prev + off + j] !== old[j]) ok = false;
  for (let j = 0; j < nb.length; j++) states[row + off + j] = nb[j]!;
  site.times[k] = p.time;
  site.timesF[k] = Number(p.time);
  const pp: PlacedPoke = { poke: p, seq, site, k, consistent: ok };
  site.pokes[k] = pp;
  return pp;
}

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

/** ordered-events order: time, then file offset (stable for the rest). */
export function sortInApplyOrder(p: Poke[]): void {
  let sorted = true;
  for (let i = 1; i < p.length && sorted; i++) {
    const a = p[i - 1]!;
    const b = p[i]!;
    if (a.time > b.time || (a.time === b.time && a.fileOffset > b.fileOffset)) sorted = false;
  }
  if (sorted) return;
  p.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset));
}

export interface SiteGroup {
  start: bigint;
  end: bigint;
  members: number[];
  site?: Site;
}

/** Merge overlapping poke ranges into disjoint sites; members stay in apply order. */
export function groupSites(applied: Poke[]): SiteGroup[] {
  // the widest poke per address, as a length: one bigint end per address, not per poke
  const byAddr = new Map<bigint, { end: bigint; span: number; members: number[] }>();
  for (let i = 0; i < applied.length; i++) {
    const p = applied[i]!;
    const span = Math.max(p.oldBytes.length, p.newBytes.length);
    const g = byAddr.get(p.addr);
    if (g) {
      if (span > g.span) g.span = span;
      g.members.push(i);
    } else byAddr.set(p.addr, { end: p.addr, span, members: [i] });
  }
  for (const [a, g] of byAddr) g.end = a + BigInt(g.span);
  const addrs = [...byAddr.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: SiteGroup[] = [];
  let cur: SiteGroup | undefined;
  let parts: number[][] = [];
  const flush = (): void => {
    if (!cur) return;
    cur.members = parts.length === 1 ? parts[0]! : parts.flat().sort((a, b) => a - b);
    out.push(cur);
  };
  for (const a of addrs) {
    const g = byAddr.get(a)!;
    if (cur && a < cur.end) {
      if (g.end > cur.end) cur.end = g.end;
      parts.push(g.members);
    } else {
      flush();
      cur = { start: a, end: g.end, members: [] };
      parts = [g.members];
    }
  }
  flush();
  return out;
}
