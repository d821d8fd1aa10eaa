import { CodeImage } from './code-image.js';
import { isKernelPoke, pokeEnd, type KernelSymbolEvent, type Poke } from './poke.js';
import { hex2 } from '../io/hex.js';
import { lastStartingBy } from './symbols.js';

/**
 * Verify every poke against the code image at its time: its old bytes must
 * equal what the image holds there just before it (kcore plus every earlier
 * poke). A poke missing from the file (lost, filtered) leaves the image
 * stale, so the next poke at that site disagrees — the lost change lies
 * between the previous poke at the site (or the start) and that one.
 *
 * Also reported, because perf silently drops them (machine.c
 * machine__process_text_poke, pr_debug only):
 *  - pokes whose cpumode is not PERF_RECORD_MISC_KERNEL;
 *  - pokes outside every known map (kcore segments, the kernel MMAP,
 *    KSYMBOL ranges, trampolines created by earlier pokes);
 *  - trampoline removals (new_len 0) that remove no trampoline created at
 *    that address, or remove a different length than was created.
 */
export interface CheckPoke {
  time: bigint;
  cpu: number;
  addr: bigint;
  oldLen: number;
  newLen: number;
  fileOffset: number;
}

export interface SiteDisagreement {
  siteStart: bigint;
  siteEnd: bigint;
  /** How many of the site's pokes disagree. */
  stale: number;
  /** The first disagreeing poke. */
  poke: CheckPoke;
  /** What the image held over [addr, addr+old_len) before it ('..' = no code there). */
  expected: string;
  /** The poke's old bytes. */
  actual: string;
  /** The lost change lies in (after, before]: after = previous poke at the site, undefined = start of recording. */
  windowAfter?: bigint;
  windowBefore: bigint;
}

export interface CheckReport {
  pokes: number;
  sites: number;
  consistent: number;
  stale: number;
  disagreements: SiteDisagreement[];
  nonKernel: CheckPoke[];
  outsideMaps: CheckPoke[];
  badRemovals: { poke: CheckPoke; reason: string }[];
  /** True when nothing at all was found. */
  ok: boolean;
}

export interface CheckOptions {
  /** Known maps beyond kcore: kernel MMAP ranges (used when there is no kcore). */
  maps?: { start: bigint; end: bigint }[];
  ksymbols?: KernelSymbolEvent[];
}

export function summarizePoke(p: Poke): CheckPoke {
  return {
    time: p.time,
    cpu: p.cpu,
    addr: p.addr,
    oldLen: p.oldBytes.length,
    newLen: p.newBytes.length,
    fileOffset: p.fileOffset,
  };
}

function hexOrGap(b: Uint8Array, live: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < b.length; i++) parts.push(live[i] ? hex2(b[i]!) : '..');
  return parts.join(' ');
}

/**
 * A per-site memo of `test(addr, span)` for the pokes of `image`, when the
 * answer cannot change during the recording (the maps, the kcore image): a
 * site's pokes (same address, same length, over and over) share one answer,
 * compared on the store's u32 halves, so the usual poke costs no object and
 * no bigint. The returned function takes the poke's apply index q, its store
 * index i and the span.
 */
export function siteRangeMemo(
  image: CodeImage,
  test: (addr: bigint, span: number) => boolean,
): (q: number, i: number, span: number) => boolean {
  const st = image.store;
  const memoHi = new Float64Array(image.sites.length).fill(-1);
  const memoLo = new Float64Array(image.sites.length);
  const memoSpan = new Float64Array(image.sites.length);
  const memoIn = new Uint8Array(image.sites.length);
  return (q, i, span) => {
    const s = image.siteOf[q]!;
    const hi = st.addrHi[i]!;
    const lo = st.addrLo[i]!;
    if (memoHi[s] === hi && memoLo[s] === lo && memoSpan[s] === span) return memoIn[s] === 1;
    const r = test(st.addr(i), span);
    memoHi[s] = hi;
    memoLo[s] = lo;
    memoSpan[s] = span;
    memoIn[s] = r ? 1 : 0;
    return r;
  };
}

/** Linear in the number of pokes (after the image's build). */
export function checkImage(image: CodeImage, opts: CheckOptions = {}): CheckReport {
  const disagreements: SiteDisagreement[] = [];
  let stale = 0;
  // the consistency flags are columns: objects are made only for the disagreeing pokes
  const ok = image.consistentAt;
  for (const site of image.sites) {
    const members = site.members;
    let first: SiteDisagreement | undefined;
    for (let k = 0; k < members.length; k++) {
      const q = members[k]!;
      if (ok[q]) continue;
      stale++;
      if (!first) {
        const pp = image.placedAt(q);
        first = {
          siteStart: site.start,
          siteEnd: site.end,
          stale: 0,
          poke: summarizePoke(pp.poke),
          expected: ((b) => hexOrGap(b.bytes, b.live))(CodeImage.bytesBefore(pp)),
          actual: hexOrGap(pp.poke.oldBytes, new Uint8Array(pp.poke.oldBytes.length).fill(1)),
          windowAfter: k > 0 ? image.placedAt(members[k - 1]!).poke.time : undefined,
          windowBefore: pp.poke.time,
        };
        disagreements.push(first);
      }
      first.stale++;
    }
  }

  const nonKernel = image.ignoredPokes.filter((p) => !isKernelPoke(p)).map(summarizePoke);

  // maps: kcore segments, else the given maps; plus KSYMBOL ranges and live trampolines
  const ranges: { start: bigint; end: bigint }[] = image.segments.map((s) => ({
    start: s.vaddr,
    end: s.vaddr + BigInt(s.bytes.length),
  }));
  if (ranges.length === 0 && opts.maps) ranges.push(...opts.maps);
  for (const k of opts.ksymbols ?? []) ranges.push({ start: k.addr, end: k.addr + BigInt(k.len) });
  ranges.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const outsideMaps: CheckPoke[] = [];
  const badRemovals: { poke: CheckPoke; reason: string }[] = [];
  // trampolines created by pokes, by address: length and whether live
  const created = new Map<bigint, { len: number; live: boolean }>();
  const inCreated = (a: bigint, e: bigint): boolean => {
    for (const [start, t] of created) if (t.live && a >= start && e <= start + BigInt(t.len)) return true;
    return false;
  };
  const haveMaps = ranges.length > 0;
  const st = image.store;
  const inMaps = siteRangeMemo(image, (a, span) => inRanges(ranges, a, a + BigInt(span)));
  for (let q = 0; q < image.order.length; q++) {
    const i = image.order[q]!;
    const ol = st.oldLen[i]!;
    const nl = st.newLen[i]!;
    if (ol !== 0 && nl !== 0) {
      if (haveMaps && !inMaps(q, i, Math.max(ol, nl))) {
        const p = st.poke(i);
        if (!inCreated(p.addr, pokeEnd(p))) outsideMaps.push(summarizePoke(p));
      }
      continue;
    }
    const p = st.poke(i);
    if (ol === 0) {
      created.set(p.addr, { len: nl, live: true });
      continue;
    }
    const t = created.get(p.addr);
    if (t?.live) {
      t.live = false;
      if (t.len !== ol)
        badRemovals.push({ poke: summarizePoke(p), reason: `removes ${ol} bytes, trampoline created with ${t.len}` });
      else if (!image.consistentAt[q])
        badRemovals.push({
          poke: summarizePoke(p),
          reason: 'old bytes differ from the trampoline as created and poked',
        });
    } else if (!image.inBase(p.addr) && !inRanges(ranges, p.addr, pokeEnd(p))) {
      badRemovals.push({
        poke: summarizePoke(p),
        reason: t ? 'trampoline already removed' : 'no trampoline created at this address',
      });
    }
  }
  const consistent = image.order.length - stale;
  return {
    pokes: image.order.length + image.ignored.length,
    sites: image.sites.length,
    consistent,
    stale,
    disagreements,
    nonKernel,
    outsideMaps,
    badRemovals,
    ok: stale === 0 && nonKernel.length === 0 && outsideMaps.length === 0 && badRemovals.length === 0,
  };
}

function inRanges(sorted: { start: bigint; end: bigint }[], a: bigint, e: bigint): boolean {
  const lo = lastStartingBy(sorted, a) + 1;
  for (let i = lo - 1; i >= 0 && i >= lo - 4; i--) {
    const r = sorted[i]!;
    if (a >= r.start && e <= r.end) return true;
  }
  return false;
}
