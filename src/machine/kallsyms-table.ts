/**
 * Kernel symbols the way perf 6.1 builds them from kallsyms, so that
 * `sym+0xoff` matches `perf script` to the byte (tools/perf/util/symbol.c
 * __dso__load_kallsyms):
 *
 *  1. keep kallsyms types T/W/D/B (either case), length 0;
 *  2. symbols__fixup_end(is_kallsyms): a symbol ends where the next one
 *     starts — except at a kernel↔module boundary (one name has "[mod]",
 *     the other not), where it ends at the next page after its start; the
 *     last ends one page after its start rounded up to a page;
 *  3. symbols__fixup_duplicate: of symbols at one address keep the best
 *     (non-zero length, then non-weak, then global, then fewer leading
 *     underscores, then longer name, then the first);
 *  4. dso__split_kallsyms_for_kcore: a symbol outside every executable kcore
 *     segment is dropped, and one that runs past its segment's end is cut
 *     there.
 *
 * A host's table has ~120 k symbols: addresses are kept as 32-bit halves in
 * typed arrays (built with one sort of an index array, searched without
 * bigint compares) and a symbol's object is made the first time it is asked
 * for, so a load costs a few MB instead of a bigint pair and three objects
 * per symbol.
 */
import { type Kallsyms, isPerfSymbolCode } from './kallsyms.js';
import { type AddrRange, type KernelSymbol, SymbolTable } from './symbols.js';

const PAGE = 4096;
const TWO32 = 2 ** 32;

export interface KallsymsTableOptions {
  /** Leave out module symbols (after the fixups, which look at them): perf's kernel map without module maps. */
  kernelOnly?: boolean;
}

/**
 * Build from parsed kallsyms. `maps` are the executable kcore segments; when
 * there are none, symbols are kept unclipped (perf's plain kallsyms path).
 */
export function kallsymsTable(k: Kallsyms, maps: readonly AddrRange[], opts: KallsymsTableOptions = {}): SymbolTable {
  const order = sortedCandidates(k);
  const n = order.length;
  const sHi = new Uint32Array(n);
  const sLo = new Uint32Array(n);
  const eHi = new Float64Array(n);
  const eLo = new Uint32Array(n);
  for (let p = 0; p < n; p++) {
    sHi[p] = k.addrHi[order[p]!]!;
    sLo[p] = k.addrLo[order[p]!]!;
  }
  fixupEnd(k, order, sHi, sLo, eHi, eLo);
  const kept = fixupDuplicate(k, order, sHi, sLo, eHi, eLo);
  return clip(k, order, kept, { sHi, sLo, eHi, eLo }, maps, opts.kernelOnly ?? false);
}

/** Lines perf keeps (its types, no "$" names) in rbtree order: by address, equal ones in file order. */
function sortedCandidates(k: Kallsyms): Uint32Array {
  const idx = new Uint32Array(k.length);
  let n = 0;
  let sorted = true;
  for (let i = 0; i < k.length; i++) {
    if (!isPerfSymbolCode(k.typeCode[i]!) || k.nameCharCode(i, 0) === 0x24) continue;
    if (n > 0 && sorted) {
      const p = idx[n - 1]!;
      sorted = k.addrHi[p]! < k.addrHi[i]! || (k.addrHi[p] === k.addrHi[i] && k.addrLo[p]! <= k.addrLo[i]!);
    }
    idx[n++] = i;
  }
  const out = idx.subarray(0, n);
  // rbtree insert puts equal starts to the right: a stable sort by start (ties by line)
  if (!sorted) out.sort((a, b) => k.addrHi[a]! - k.addrHi[b]! || k.addrLo[a]! - k.addrLo[b]! || a - b);
  return out;
}

/** perf's fullName ("name\t[mod]" for module symbols) holds '['. */
function bracketed(k: Kallsyms, i: number): boolean {
  return k.moduleIndex[i]! >= 0 || k.nameHas(i, 0x5b);
}

/** hi * 2^32 + lo rounded up to a page, plus `plus` (a page multiple), as halves. */
function pageUp(hi: number, lo: number, plus: number, eHi: Float64Array, eLo: Uint32Array, p: number): void {
  const v = Math.ceil(lo / PAGE) * PAGE + plus;
  eHi[p] = hi + Math.floor(v / TWO32);
  eLo[p] = v % TWO32;
}

/** symbols__fixup_end: every symbol still has length 0 when it is the previous one. */
function fixupEnd(
  k: Kallsyms,
  order: Uint32Array,
  sHi: Uint32Array,
  sLo: Uint32Array,
  eHi: Float64Array,
  eLo: Uint32Array,
): void {
  const n = order.length;
  if (n === 0) return;
  let prevBracket = bracketed(k, order[0]!);
  for (let p = 1; p < n; p++) {
    const currBracket = bracketed(k, order[p]!);
    // roundup(start + PAGE, PAGE): start + PAGE rounded up is start rounded up, plus a page
    if (prevBracket !== currBracket) pageUp(sHi[p - 1]!, sLo[p - 1]!, PAGE, eHi, eLo, p - 1);
    else {
      eHi[p - 1] = sHi[p]!;
      eLo[p - 1] = sLo[p]!;
    }
    prevBracket = currBracket;
  }
  pageUp(sHi[n - 1]!, sLo[n - 1]!, PAGE, eHi, eLo, n - 1);
}

function underscores(k: Kallsyms, i: number): number {
  let c = 0;
  while (k.nameCharCode(i, c) === 0x5f) c++;
  return c;
}

/** perf's choose_best_symbol for entries at positions a and b (same start): true when a is kept over b. */
function preferFirst(
  k: Kallsyms,
  order: Uint32Array,
  eHi: Float64Array,
  eLo: Uint32Array,
  a: number,
  b: number,
): boolean {
  const ia = order[a]!;
  const ib = order[b]!;
  // same start: a length is zero when the end equals the other's start
  const la = eHi[a] !== k.addrHi[ia] || eLo[a] !== k.addrLo[ia];
  const lb = eHi[b] !== k.addrHi[ib] || eLo[b] !== k.addrLo[ib];
  if (!lb && la) return true;
  if (!la && lb) return false;
  const ta = k.typeCode[ia]!;
  const tb = k.typeCode[ib]!;
  const wa = (ta | 0x20) === 0x77;
  const wb = (tb | 0x20) === 0x77;
  if (wb && !wa) return true;
  if (wa && !wb) return false;
  // the kept types are letters: upper case is global
  const ga = !wa && ta < 0x61;
  const gb = !wb && tb < 0x61;
  if (ga && !gb) return true;
  if (gb && !ga) return false;
  const ua = underscores(k, ia);
  const ub = underscores(k, ib);
  if (ub > ua) return true;
  if (ua > ub) return false;
  const na = fullNameLength(k, ia);
  const nb = fullNameLength(k, ib);
  return na >= nb;
}

function fullNameLength(k: Kallsyms, i: number): number {
  const m = k.module(i);
  return k.nameLength(i) + (m === undefined ? 0 : m.length + 3);
}

/** symbols__fixup_duplicate: the positions kept, one per start. */
function fixupDuplicate(
  k: Kallsyms,
  order: Uint32Array,
  sHi: Uint32Array,
  sLo: Uint32Array,
  eHi: Float64Array,
  eLo: Uint32Array,
): Uint32Array {
  const n = order.length;
  const kept = new Uint32Array(n);
  let m = 0;
  let curr = -1;
  for (let p = 0; p < n; p++) {
    if (curr < 0) curr = p;
    else if (sHi[curr] !== sHi[p] || sLo[curr] !== sLo[p]) {
      kept[m++] = curr;
      curr = p;
    } else if (!preferFirst(k, order, eHi, eLo, curr, p)) curr = p;
  }
  if (curr >= 0) kept[m++] = curr;
  return kept.subarray(0, m);
}

interface Halves {
  sHi: Uint32Array;
  sLo: Uint32Array;
  eHi: Float64Array;
  eLo: Uint32Array;
}

/** Number halves of a bigint: hi * 2^32 + lo. */
function hiOf(v: bigint): number {
  return Number(v >> 32n);
}
function loOf(v: bigint): number {
  return Number(v & 0xffffffffn);
}

/** dso__split_kallsyms_for_kcore: drop symbols outside the maps, cut those running past their map's end. */
function clip(
  k: Kallsyms,
  order: Uint32Array,
  kept: Uint32Array,
  h: Halves,
  maps: readonly AddrRange[],
  kernelOnly: boolean,
): SymbolTable {
  const sorted = [...maps].sort((a, b) => (a.start < b.start ? -1 : 1));
  const mSHi = sorted.map((r) => hiOf(r.start));
  const mSLo = sorted.map((r) => loOf(r.start));
  const mEHi = sorted.map((r) => hiOf(r.end));
  const mELo = sorted.map((r) => loOf(r.end));
  const out: Halves = {
    sHi: new Uint32Array(kept.length),
    sLo: new Uint32Array(kept.length),
    eHi: new Float64Array(kept.length),
    eLo: new Uint32Array(kept.length),
  };
  const line = new Uint32Array(kept.length);
  let n = 0;
  for (const p of kept) {
    if (kernelOnly && k.moduleIndex[order[p]!]! >= 0) continue;
    const sh = h.sHi[p]!;
    const sl = h.sLo[p]!;
    let eh = h.eHi[p]!;
    let el = h.eLo[p]!;
    if (sorted.length > 0) {
      let j = 0;
      for (; j < sorted.length; j++) {
        if (lessEq(mSHi[j]!, mSLo[j]!, sh, sl) && less(sh, sl, mEHi[j]!, mELo[j]!)) break;
      }
      if (j === sorted.length) continue;
      if (less(mEHi[j]!, mELo[j]!, eh, el)) [eh, el] = [mEHi[j]!, mELo[j]!];
    }
    out.sHi[n] = sh;
    out.sLo[n] = sl;
    out.eHi[n] = eh;
    out.eLo[n] = el;
    line[n++] = order[p]!;
  }
  return new KallsymsSymbolTable(
    k,
    line.subarray(0, n),
    out.sHi.subarray(0, n),
    out.sLo.subarray(0, n),
    out.eHi.subarray(0, n),
    out.eLo.subarray(0, n),
  );
}

function less(ah: number, al: number, bh: number, bl: number): boolean {
  return ah < bh || (ah === bh && al < bl);
}
function lessEq(ah: number, al: number, bh: number, bl: number): boolean {
  return ah < bh || (ah === bh && al <= bl);
}

class KallsymsSymbolTable extends SymbolTable {
  /** Symbols made so far, by position: the same object for each lookup. */
  private readonly made = new Map<number, KernelSymbol>();

  constructor(
    private readonly k: Kallsyms,
    /** The kallsyms line of each symbol (its name and module). */
    private readonly line: Uint32Array,
    private readonly sHi: Uint32Array,
    private readonly sLo: Uint32Array,
    private readonly eHi: Float64Array,
    private readonly eLo: Uint32Array,
  ) {
    super();
  }

  get length(): number {
    return this.line.length;
  }

  symbolAt(i: number): KernelSymbol {
    let s = this.made.get(i);
    if (s === undefined) {
      const l = this.line[i]!;
      s = {
        start: (BigInt(this.sHi[i]!) << 32n) | BigInt(this.sLo[i]!),
        end: (BigInt(this.eHi[i]!) << 32n) + BigInt(this.eLo[i]!),
        name: this.k.name(l),
        module: this.k.module(l),
      };
      this.made.set(i, s);
    }
    return s;
  }

  /** As SymbolTable's, comparing names in the kallsyms text (no symbol made for those passed over). */
  override findName(name: string, kernelOnly: boolean): KernelSymbol | undefined {
    for (let i = 0; i < this.line.length; i++) {
      const l = this.line[i]!;
      if ((!kernelOnly || this.k.moduleIndex[l]! < 0) && this.k.nameIs(l, name)) return this.symbolAt(i);
    }
    return undefined;
  }

  find(addr: bigint): KernelSymbol | undefined {
    const h = hiOf(addr);
    const l = loOf(addr);
    let lo = 0;
    let hi = this.line.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lessEq(this.sHi[mid]!, this.sLo[mid]!, h, l)) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    if (i < 0) return undefined;
    const eh = this.eHi[i]!;
    const el = this.eLo[i]!;
    if (less(h, l, eh, el)) return this.symbolAt(i);
    // a zero-length symbol holds its own address
    const sh = this.sHi[i]!;
    const sl = this.sLo[i]!;
    return h === sh && l === sl && eh === sh && el === sl ? this.symbolAt(i) : undefined;
  }
}
