import { isPerfSymbolType, type KallsymsEntry } from './kallsyms.js';

/**
 * Kernel symbols the way perf 6.1 builds them from a kcore_dir, so that
 * `sym+0xoff` matches `perf script --show-text-poke-events` to the byte
 * (tools/perf/util/symbol.c __dso__load_kallsyms):
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
 */
export interface KernelSymbol {
  start: bigint;
  end: bigint;
  name: string;
  module?: string;
}

export interface AddrRange {
  start: bigint;
  end: bigint;
}

const PAGE = 4096n;
const roundup = (x: bigint, a: bigint): bigint => ((x + a - 1n) / a) * a;

interface Work {
  start: bigint;
  end: bigint;
  name: string;
  /** perf's name before splitting: "name\t[mod]" for module symbols. */
  fullName: string;
  module?: string;
  binding: 'weak' | 'global' | 'local';
  seq: number;
}

export class SymbolTable {
  /** Sorted by start, non-overlapping. */
  readonly symbols: KernelSymbol[];
  private readonly starts: bigint[];

  private constructor(symbols: KernelSymbol[]) {
    this.symbols = symbols;
    this.starts = symbols.map((s) => s.start);
  }

  static empty(): SymbolTable {
    return new SymbolTable([]);
  }

  /** From symbols already sorted by start and non-overlapping (e.g. readElfSymbols). */
  static of(symbols: KernelSymbol[]): SymbolTable {
    return new SymbolTable(symbols);
  }

  /**
   * Build from kallsyms entries. `maps` are the executable kcore segments;
   * when there are none, symbols are kept unclipped (perf's plain kallsyms path).
   */
  static fromKallsyms(entries: KallsymsEntry[], maps: AddrRange[]): SymbolTable {
    const work: Work[] = [];
    for (const e of entries) {
      if (!isPerfSymbolType(e.type) || e.name.startsWith('$')) continue;
      const binding = e.type === 'W' || e.type === 'w' ? 'weak' : e.type === e.type.toUpperCase() ? 'global' : 'local';
      const fullName = e.module !== undefined ? `${e.name}\t[${e.module}]` : e.name;
      work.push({ start: e.addr, end: e.addr, name: e.name, fullName, module: e.module, binding, seq: work.length });
    }
    // rbtree insert puts equal starts to the right: a stable sort by start
    work.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.seq - b.seq));
    fixupEnd(work);
    const dedup = fixupDuplicate(work);
    const out: KernelSymbol[] = [];
    const sortedMaps = [...maps].sort((a, b) => (a.start < b.start ? -1 : 1));
    for (const s of dedup) {
      let end = s.end;
      if (sortedMaps.length > 0) {
        const m = sortedMaps.find((r) => s.start >= r.start && s.start < r.end);
        if (!m) continue;
        if (end > m.end) end = m.end;
      }
      out.push({ start: s.start, end, name: s.name, module: s.module });
    }
    return new SymbolTable(out);
  }

  /** The symbol containing addr (perf's symbols__find rule), or undefined. */
  find(addr: bigint): KernelSymbol | undefined {
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! <= addr) lo = mid + 1;
      else hi = mid;
    }
    const s = this.symbols[lo - 1];
    if (!s) return undefined;
    if (addr < s.end || (addr === s.start && s.start === s.end)) return s;
    return undefined;
  }

  /** `sym+0xoff` as perf prints it (offset always shown), or '' when no symbol covers addr. */
  symOff(addr: bigint): string {
    const s = this.find(addr);
    return s ? `${s.name}+0x${(addr - s.start).toString(16)}` : '';
  }
}

function fixupEnd(syms: Work[]): void {
  if (syms.length === 0) return;
  for (let i = 1; i < syms.length; i++) {
    const prev = syms[i - 1]!;
    const curr = syms[i]!;
    if (prev.end === prev.start) {
      if (!prev.fullName.includes('[') !== !curr.fullName.includes('[')) prev.end = roundup(prev.end + PAGE, PAGE);
      else prev.end = curr.start;
    }
  }
  const last = syms[syms.length - 1]!;
  if (last.end === last.start) last.end = roundup(last.start, PAGE) + PAGE;
}

function underscores(s: string): number {
  let n = 0;
  while (s[n] === '_') n++;
  return n;
}

/** perf's choose_best_symbol: true when a is kept over b. */
function preferFirst(a: Work, b: Work): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (lb === 0n && la > 0n) return true;
  if (la === 0n && lb > 0n) return false;
  const wa = a.binding === 'weak';
  const wb = b.binding === 'weak';
  if (wb && !wa) return true;
  if (wa && !wb) return false;
  const ga = a.binding === 'global';
  const gb = b.binding === 'global';
  if (ga && !gb) return true;
  if (gb && !ga) return false;
  const ua = underscores(a.fullName);
  const ub = underscores(b.fullName);
  if (ub > ua) return true;
  if (ua > ub) return false;
  if (a.fullName.length > b.fullName.length) return true;
  if (a.fullName.length < b.fullName.length) return false;
  return true;
}

function fixupDuplicate(syms: Work[]): Work[] {
  const out: Work[] = [];
  let curr: Work | undefined;
  for (const next of syms) {
    if (!curr) {
      curr = next;
      continue;
    }
    if (curr.start !== next.start) {
      out.push(curr);
      curr = next;
      continue;
    }
    if (!preferFirst(curr, next)) curr = next;
  }
  if (curr) out.push(curr);
  return out;
}
