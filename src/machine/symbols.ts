/**
 * Symbol tables: symbols sorted by start and non-overlapping, looked up by
 * perf's symbols__find rule. The kernel's, built from kallsyms by perf's
 * rules, are in kallsyms-table.ts; here is the table of symbols given as
 * objects (ELF files, JIT maps).
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

/**
 * Symbols sorted by start, non-overlapping, with perf's lookup rule.
 * `symbolAt` and `find` give the same object for a symbol each time.
 */
export abstract class SymbolTable {
  abstract readonly length: number;
  /** The i-th symbol by start (0 <= i < length). */
  abstract symbolAt(i: number): KernelSymbol;
  /** The symbol containing addr (perf's symbols__find rule), or undefined. */
  abstract find(addr: bigint): KernelSymbol | undefined;

  static empty(): SymbolTable {
    return new ListSymbolTable([]);
  }

  /** From symbols already sorted by start and non-overlapping (e.g. readElfSymbols). */
  static of(symbols: KernelSymbol[]): SymbolTable {
    return new ListSymbolTable(symbols);
  }

  /**
   * The same table with the addresses in typed arrays and no object per
   * symbol until one is looked up: for the large tables a whole run keeps (a
   * 100 MB binary's 120 k symbols were 12 MB of objects and BigInts).
   */
  static columns(symbols: KernelSymbol[]): SymbolTable {
    return new ColumnSymbolTable(symbols);
  }

  first(): KernelSymbol | undefined {
    return this.length > 0 ? this.symbolAt(0) : undefined;
  }

  last(): KernelSymbol | undefined {
    return this.length > 0 ? this.symbolAt(this.length - 1) : undefined;
  }

  /** The first symbol, by start, named `name` (and in no module when `kernelOnly`). */
  findName(name: string, kernelOnly: boolean): KernelSymbol | undefined {
    for (let i = 0; i < this.length; i++) {
      const s = this.symbolAt(i);
      if (s.name === name && (!kernelOnly || s.module === undefined)) return s;
    }
    return undefined;
  }

  /** `sym+0xoff` as perf prints it (offset always shown), or '' when no symbol covers addr. */
  symOff(addr: bigint): string {
    const s = this.find(addr);
    return s ? `${s.name}+0x${(addr - s.start).toString(16)}` : '';
  }
}

/** The index of the last of `sorted` (by start) that starts at or below `addr`; -1 when none does. */
export function lastStartingBy(sorted: readonly { start: bigint }[], addr: bigint): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.start <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

class ListSymbolTable extends SymbolTable {
  constructor(private readonly symbols: KernelSymbol[]) {
    super();
  }

  get length(): number {
    return this.symbols.length;
  }

  symbolAt(i: number): KernelSymbol {
    return this.symbols[i]!;
  }

  find(addr: bigint): KernelSymbol | undefined {
    const s = this.symbols[lastStartingBy(this.symbols, addr)];
    if (!s) return undefined;
    if (addr < s.end || (addr === s.start && s.start === s.end)) return s;
    return undefined;
  }
}

class ColumnSymbolTable extends SymbolTable {
  private readonly sHi: Uint32Array;
  private readonly sLo: Uint32Array;
  /** The end's high half: a Float64Array, as an end can be 2^64 (a symbol at the top of the space). */
  private readonly eHi: Float64Array;
  private readonly eLo: Uint32Array;
  private readonly names: string[];
  private readonly modules: (string | undefined)[] | undefined;
  /** Symbols made so far, by position: the same object for each lookup. */
  private readonly made = new Map<number, KernelSymbol>();

  constructor(symbols: KernelSymbol[]) {
    super();
    const n = symbols.length;
    this.sHi = new Uint32Array(n);
    this.sLo = new Uint32Array(n);
    this.eHi = new Float64Array(n);
    this.eLo = new Uint32Array(n);
    this.names = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const s = symbols[i]!;
      this.sHi[i] = Number(s.start >> 32n);
      this.sLo[i] = Number(s.start & 0xffffffffn);
      this.eHi[i] = Number(s.end >> 32n);
      this.eLo[i] = Number(s.end & 0xffffffffn);
      this.names[i] = s.name;
    }
    this.modules = symbols.some((s) => s.module !== undefined) ? symbols.map((s) => s.module) : undefined;
  }

  get length(): number {
    return this.names.length;
  }

  /** As SymbolTable's, with no symbol made for those passed over. */
  override findName(name: string, kernelOnly: boolean): KernelSymbol | undefined {
    for (let i = 0; i < this.names.length; i++)
      if (this.names[i] === name && (!kernelOnly || this.modules?.[i] === undefined)) return this.symbolAt(i);
    return undefined;
  }

  symbolAt(i: number): KernelSymbol {
    let s = this.made.get(i);
    if (s === undefined) {
      s = {
        start: (BigInt(this.sHi[i]!) << 32n) | BigInt(this.sLo[i]!),
        end: (BigInt(this.eHi[i]!) << 32n) + BigInt(this.eLo[i]!),
        name: this.names[i]!,
      };
      const m = this.modules?.[i];
      if (m !== undefined) s.module = m;
      this.made.set(i, s);
    }
    return s;
  }

  /** ListSymbolTable's rule, on the columns. */
  find(addr: bigint): KernelSymbol | undefined {
    const h = Number(addr >> 32n);
    const l = Number(addr & 0xffffffffn);
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const sh = this.sHi[mid]!;
      if (sh < h || (sh === h && this.sLo[mid]! <= l)) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    if (i < 0) return undefined;
    const eh = this.eHi[i]!;
    const el = this.eLo[i]!;
    if (h < eh || (h === eh && l < el)) return this.symbolAt(i);
    // a zero-length symbol holds its own address
    const sh = this.sHi[i]!;
    const sl = this.sLo[i]!;
    return h === sh && l === sl && eh === sh && el === sl ? this.symbolAt(i) : undefined;
  }
}
