/**
 * Kernel code that KSYMBOL records name (BPF programs, their sub-programs,
 * BPF trampolines and dispatchers, OOL trampolines), as `perf script` 6.1
 * names it: machine__process_ksymbol_register adds, in event order, a kernel
 * map [addr, addr + len) whose dso is called by the record's name, holding one
 * symbol of that name covering the map (a register inside a map already there
 * adds its symbol to that map's dso instead); an unregister removes the map
 * covering its address. A sample there prints `name+0xoff (name)`.
 */
import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';

interface KsymbolSymbol {
  start: bigint;
  end: bigint;
  name: string;
}

interface KsymbolMap {
  start: bigint;
  end: bigint;
  dso: string;
  symbols: KsymbolSymbol[];
}

export interface KsymbolHit {
  dso: string;
  /** undefined when the map has no symbol at the address (a register into another's map) */
  symbol?: { name: string; start: bigint };
}

export class KsymbolMaps {
  /** Few at a time (the programs loaded during one recording), searched linearly. */
  private readonly maps: KsymbolMap[] = [];

  private find(addr: bigint): KsymbolMap | undefined {
    return this.maps.find((m) => addr >= m.start && addr < m.end);
  }

  register(addr: bigint, len: number, name: string): void {
    let m = this.find(addr);
    if (!m) {
      m = { start: addr, end: addr + BigInt(len), dso: name, symbols: [] };
      this.maps.push(m);
    }
    m.symbols.push({ start: addr, end: addr + BigInt(len), name });
  }

  unregister(addr: bigint): void {
    const i = this.maps.findIndex((m) => addr >= m.start && addr < m.end);
    if (i >= 0) this.maps.splice(i, 1);
  }

  lookup(ip: bigint): KsymbolHit | undefined {
    const m = this.find(ip);
    if (!m) return undefined;
    const s = m.symbols.find((x) => ip >= x.start && ip < x.end);
    return { dso: m.dso, symbol: s ? { name: s.name, start: s.start } : undefined };
  }
}

/** Apply one KSYMBOL record (register, or unregister when its flag is set). */
export function ksymbolEvent(maps: KsymbolMaps, rec: { addr: bigint; len: number; flags: number; name: string }): void {
  if (rec.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) maps.unregister(rec.addr);
  else maps.register(rec.addr, rec.len, rec.name);
}
