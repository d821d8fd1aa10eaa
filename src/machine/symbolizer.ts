import type { CoreSegment } from './elf-core.js';
import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';
import type { KernelSymbolEvent } from './poke.js';
import type { SymbolTable } from './symbols.js';

/**
 * addr → `sym+0xoff` as perf prints it beside a TEXT_POKE: kallsyms symbols
 * inside the kcore segments, else a KSYMBOL (BPF program, OOL trampoline)
 * registered before that point of the file and not yet unregistered (perf's
 * machine__process_ksymbol adds and removes such maps in event order).
 */
export interface EventPoint {
  time: bigint;
  fileOffset: number;
}

export class Symbolizer {
  constructor(
    readonly symbols: SymbolTable,
    readonly segments: readonly CoreSegment[],
    readonly ksymbols: readonly KernelSymbolEvent[],
  ) {}

  /** '' when no symbol covers addr, as perf prints nothing then. */
  symOff(addr: bigint, at?: EventPoint): string {
    const s = this.find(addr, at);
    return s ? `${s.name}+0x${(addr - s.start).toString(16)}` : '';
  }

  find(addr: bigint, at?: EventPoint): { name: string; start: bigint } | undefined {
    if (this.segments.some((s) => addr >= s.vaddr && addr < s.vaddr + BigInt(s.bytes.length))) {
      return this.symbols.find(addr);
    }
    let found: KernelSymbolEvent | undefined;
    for (const k of this.ksymbols) {
      if (at && before(at, k)) break;
      if (k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
        if (found && k.addr === found.addr) found = undefined;
        continue;
      }
      if (addr >= k.addr && addr < k.addr + BigInt(k.len)) found = k;
    }
    if (found) return { name: found.name, start: found.addr };
    if (this.segments.length === 0) return this.symbols.find(addr);
    return undefined;
  }
}

function before(a: EventPoint, b: { time: bigint; fileOffset: number }): boolean {
  return a.time < b.time || (a.time === b.time && a.fileOffset < b.fileOffset);
}
