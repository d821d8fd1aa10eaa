import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';
import type { KernelSymbolEvent } from './poke.js';
import type { SymbolTable } from './symbols.js';
import { loadedKernelSymbol, type KernelSymbolModel } from './kernel-symbols.js';

/**
 * addr → `sym+0xoff` as perf prints it beside a TEXT_POKE: kcore_dir's
 * symbols where perf keeps them (src/machine/kernel-symbols.ts), else a KSYMBOL (BPF program, OOL trampoline)
 * registered before that point of the file and not yet unregistered (perf's
 * machine__process_ksymbol adds and removes such maps in event order).
 *
 * perf loads kcore_dir lazily: the first poke that falls in the kernel map
 * (the `[kernel.kallsyms]` MMAP) loads it and replaces every kernel and
 * module map with the kcore segments. A poke to a module map before that
 * loads only the module's own dso, which has no symbols in a kcore_dir
 * recording, so perf prints no symbol for it. `kernelLoadedAt` is that first
 * poke; pass `at` to get perf's answer for a poke at that point.
 */
export interface EventPoint {
  time: bigint;
  fileOffset: number;
}

export class Symbolizer {
  constructor(
    readonly symbols: SymbolTable,
    readonly ksymbols: readonly KernelSymbolEvent[],
    readonly kernelLoadedAt?: EventPoint,
    readonly kernelMap?: { start: bigint; end: bigint },
    /**
     * How perf resolves kernel addresses once loaded (kcore or kallsyms alone):
     * src/machine/kernel-symbols.ts. Without a kcore_dir there is none, and only KSYMBOLs name code.
     */
    readonly model?: KernelSymbolModel,
  ) {}

  /** '' when no symbol covers addr, as perf prints nothing then. */
  symOff(addr: bigint, at?: EventPoint): string {
    const s = this.find(addr, at);
    return s ? `${s.name}+0x${(addr - s.start).toString(16)}` : '';
  }

  find(addr: bigint, at?: EventPoint): { name: string; start: bigint } | undefined {
    const loaded = !at || this.loadedAt(at);
    if (!loaded && !(addr >= this.kernelMap!.start && addr < this.kernelMap!.end)) return this.findKsymbol(addr, at);
    const r = this.model ? loadedKernelSymbol(this.model, addr) : 'no-map';
    return r === 'no-map' ? this.findKsymbol(addr, at) : r;
  }

  /**
   * The KSYMBOL (BPF program, OOL trampoline) live at that point and covering
   * addr, whatever perf would name it: code the kernel created while recording
   * is named by its own KSYMBOL record, where perf names it after the nearest
   * module symbol.
   */
  ksymbolAt(addr: bigint, at?: EventPoint): string | undefined {
    const k = this.findKsymbol(addr, at);
    return k ? `${k.name}+0x${(addr - k.start).toString(16)}` : undefined;
  }

  /** Whether perf has loaded kcore_dir at that point (see kernelLoadedAt). */
  loadedAt(at: EventPoint): boolean {
    return !this.kernelMap || (this.kernelLoadedAt !== undefined && !before(at, this.kernelLoadedAt));
  }

  private findKsymbol(addr: bigint, at?: EventPoint): { name: string; start: bigint } | undefined {
    let found: KernelSymbolEvent | undefined;
    for (const k of this.ksymbols) {
      if (at && before(at, k)) break;
      if (k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
        if (found && k.addr === found.addr) found = undefined;
        continue;
      }
      if (addr >= k.addr && addr < k.addr + BigInt(k.len)) found = k;
    }
    return found ? { name: found.name, start: found.addr } : undefined;
  }
}

/**
 * Walks points in file order and numbers the stretches between the events
 * that change the symbolizer's answers (each KSYMBOL, the load of
 * kcore_dir): two points with the same number get the same find, symOff and
 * ksymbolAt for every address. A caller that names a million pokes can then
 * keep names across a stretch. Points should come in order (time, then file
 * offset); one that goes back restarts the walk, so any order stays correct.
 */
export class NamingEpochs {
  /** KSYMBOLs at or before the last point: the prefix findKsymbol reads. */
  private seen = 0;
  private last: EventPoint | undefined;
  private loaded = false;

  constructor(private readonly s: Symbolizer) {}

  /** True when no later point can start a new stretch (the number stays as it is from here on). */
  get settled(): boolean {
    return (
      this.last !== undefined &&
      this.seen === this.s.ksymbols.length &&
      (this.loaded || this.s.kernelLoadedAt === undefined)
    );
  }

  /** The stretch `at` falls in. */
  at(at: EventPoint): number {
    if (this.last && before(at, this.last)) this.seen = 0;
    this.last = at;
    // findKsymbol stops at the first KSYMBOL after the point: its prefix only grows along the walk
    const ks = this.s.ksymbols;
    while (this.seen < ks.length && !before(at, ks[this.seen]!)) this.seen++;
    this.loaded = this.s.loadedAt(at);
    return this.seen * 2 + (this.loaded ? 1 : 0);
  }
}

function before(a: EventPoint, b: { time: bigint; fileOffset: number }): boolean {
  return a.time < b.time || (a.time === b.time && a.fileOffset < b.fileOffset);
}
