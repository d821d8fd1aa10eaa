/**
 * The `sym`, `symoff` and `dso` columns of `perf script` (perf 6.1
 * sample__fprintf_sym / sample__fprintf_callchain): " name+0xoff (dso)" for
 * an address, kernel addresses through the kernel map (the [kernel.kallsyms]
 * MMAP) and kallsyms, user addresses through the process's maps and the
 * mapped file's ELF symbols. No map: "[unknown] ([unknown])"; a map without
 * a symbol there: "[unknown] (dso)". Kernel code outside the kernel map:
 * the KSYMBOL maps (script-ksymbols.ts).
 */
import { type DsoSymbols, perfMapSymbols } from '../machine/dso-symbols.js';
import type { SymbolTable } from '../machine/symbols.js';
import type { UserMaps } from '../session/user-maps.js';
import type { PerfField } from './script-field-specs.js';
import { KsymbolMaps } from './script-ksymbols.js';

export interface SymbolColumns {
  sym: boolean;
  symoff: boolean;
  dso: boolean;
}

export function symbolColumns(f: ReadonlySet<PerfField>): SymbolColumns | undefined {
  const c = { sym: f.has('sym'), symoff: f.has('symoff'), dso: f.has('dso') };
  return c.sym || c.dso ? c : undefined;
}

export class ScriptSymbols {
  private kernelMap: { start: bigint; end: bigint } | undefined;

  constructor(
    private readonly dsos: DsoSymbols,
    private readonly maps: UserMaps,
  ) {}

  /** A kernel MMAP: `[kernel.kallsyms]…` sets the kernel map (machine__process_kernel_mmap_event). */
  onKernelMmap(filename: string, start: bigint, len: bigint): void {
    if (filename.startsWith('[kernel.kallsyms]')) this.kernelMap = { start, end: start + len };
  }

  /** BPF programs and trampolines named by KSYMBOL records, in event order. */
  readonly ksymbols = new KsymbolMaps();

  private readonly jit = new Map<string, SymbolTable | null>();
  private jitMap(path: string): SymbolTable | undefined {
    let j = this.jit.get(path);
    if (j === undefined) {
      j = perfMapSymbols(path) ?? null;
      this.jit.set(path, j);
    }
    return j ?? undefined;
  }

  /** " sym+0xoff (dso)" for ip, as the columns ask. */
  text(c: SymbolColumns, pid: number, ip: bigint, kernel: boolean): string {
    let name: string | undefined;
    let off = 0n;
    let dso = '[unknown]';
    if (kernel) {
      const km = this.kernelMap;
      if (km && ip >= km.start && ip < km.end) {
        dso = '[kernel.kallsyms]';
        const s = this.dsos.kernel()?.find(ip);
        if (s) [name, off] = [s.name, ip - s.start];
      } else {
        const k = this.ksymbols.lookup(ip);
        if (k) dso = k.dso;
        if (k?.symbol) [name, off] = [k.symbol.name, ip - k.symbol.start];
      }
    } else {
      const hit = this.maps.lookup(pid, ip);
      if (hit) {
        dso = hit.filename;
        // anonymous code is named /tmp/perf-PID.map (user-maps.ts), symbols from that file if it exists
        const jit = /^\/tmp\/perf-\d+\.map$/.test(hit.filename);
        const table = jit ? this.jitMap(hit.filename) : hit.identity ? undefined : this.dsos.user(hit.filename);
        const s = table?.find(hit.mapIp);
        if (s) [name, off] = [s.name, hit.mapIp - s.start];
      }
    }
    let out = '';
    if (c.sym) out += name === undefined ? ' [unknown]' : c.symoff ? ` ${name}+0x${off.toString(16)}` : ` ${name}`;
    if (c.dso) out += ` (${dso})`;
    return out;
  }
}
