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

class ListSymbolTable extends SymbolTable {
  private readonly starts: bigint[];

  constructor(private readonly symbols: KernelSymbol[]) {
    super();
    this.starts = symbols.map((s) => s.start);
  }

  get length(): number {
    return this.symbols.length;
  }

  symbolAt(i: number): KernelSymbol {
    return this.symbols[i]!;
  }

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
}
