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
import { type EventAttr, PerfType } from '../abi/event-attr.js';
import type { UserMaps } from '../session/user-maps.js';
import type { PerfField } from './script-field-specs.js';
import { KsymbolMaps } from './script-ksymbols.js';
import { insnLength } from '../x86/insn-length.js';
import type { BranchAddr } from './script-brstack.js';
import { SourceLines } from './script-srcline.js';

export interface SymbolColumns {
  sym: boolean;
  symoff: boolean;
  dso: boolean;
  /** "\n  file:line" after the symbol (perf's map__fprintf_srcline, script-srcline.ts). */
  srcline?: boolean;
}

export function symbolColumns(f: ReadonlySet<PerfField>): SymbolColumns | undefined {
  const c = { sym: f.has('sym'), symoff: f.has('symoff'), dso: f.has('dso'), srcline: f.has('srcline') };
  return c.sym || c.dso || c.srcline ? c : undefined;
}

/** page-faults, minor-faults, major-faults (PERF_COUNT_SW_PAGE_FAULTS{,_MIN,_MAJ}). */
const PAGE_FAULT_CONFIGS = new Set([2n, 5n, 6n]);

/**
 * The columns perf prints after a sample's addr (perf_sample__fprintf_addr):
 * its symbol and dso, for the events whose addr is a code or data address
 * (sample_addr_correlates_sym: the software page-fault events); undefined
 * when the addr prints alone.
 */
export function addrColumns(f: ReadonlySet<PerfField>, attr: EventAttr | undefined): SymbolColumns | undefined {
  if (!f.has('addr') || attr?.type !== PerfType.SOFTWARE || !PAGE_FAULT_CONFIGS.has(attr.config)) return undefined;
  const c = symbolColumns(f);
  // perf_sample__fprintf_addr prints the addr's symbol and dso, never its source line
  return c && (c.sym || c.dso) ? { ...c, srcline: false } : undefined;
}

const EMPTY = new Uint8Array(0);

export class ScriptSymbols {
  private kernelMap: { start: bigint; end: bigint } | undefined;

  constructor(
    readonly dsos: DsoSymbols,
    private readonly maps: UserMaps,
  ) {}

  private kernelLoaded = false;
  /**
   * No kernel map, or it has had its first lookup (and fixup): a kernel
   * address's text changes only with the next MMAP or KSYMBOL.
   */
  get kernelSettled(): boolean {
    return this.kernelLoaded || this.kernelMap === undefined;
  }
  /**
   * dso__load_kernel_sym after loading kallsyms (not kcore): map__fixup_start
   * and map__fixup_end make the kernel map run from its first symbol to its
   * last symbol's end, so init text above _etext (start_kernel,
   * x86_64_start_kernel) is named from then on. perf loads on the first
   * address found in the MMAP's range; that address was looked up before.
   */
  private fixupKernelMap(km: { start: bigint; end: bigint }, table: SymbolTable | undefined): void {
    this.kernelLoaded = true;
    const first = table?.first();
    const last = table?.last();
    if (!first || !last || this.dsos.kernelFromKcore) return;
    km.start = first.start;
    km.end = last.end;
  }

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

  /**
   * perf's function resolver for tracepoint payloads (machine__resolve_kernel_addr):
   * the kernel symbol at addr inside the kernel map, with its start.
   */
  kernelFunction(addr: bigint): { name: string; start: bigint } | undefined {
    const km = this.kernelMap;
    if (!km || addr < km.start || addr >= km.end) return undefined;
    const s = this.dsos.kernel()?.find(addr);
    return s ? { name: s.name, start: s.start } : undefined;
  }

  /** The symbol of a user address: its name, start (in mapIp's space), the map's file and ip's offset in it. */
  userSymbol(pid: number, ip: bigint): { name: string; start: bigint; filename: string; mapIp: bigint } | undefined {
    const hit = this.maps.lookup(pid, ip);
    if (!hit || hit.identity || /^\/tmp\/perf-\d+\.map$/.test(hit.filename)) return undefined;
    const s = this.dsos.user(hit.filename)?.find(hit.mapIp);
    return s && { name: s.name, start: s.start, filename: hit.filename, mapIp: hit.mapIp };
  }

  /**
   * The instruction at a sample's ip as perf's arch_fetch_insn reads it
   * (thread__memcpy): from the data file of the map's dso at ip's file
   * offset, decoded in the file's ELF class; empty when perf reads nothing
   * (a kernel address without kcore, a file without symbols or not found).
   */
  insnAt(pid: number, ip: bigint, kernel: boolean): Uint8Array {
    if (ip === 0n || kernel) return EMPTY;
    const hit = this.maps.lookup(pid, ip);
    // map__load fails for a dso without symbols: thread__memcpy gives up there
    if (!hit || hit.identity || !this.dsos.user(hit.filename)) return EMPTY;
    const bytes = this.dsos.unwindTables().get(hit.filename)?.bytes;
    if (!bytes || hit.mapIp >= BigInt(bytes.length)) return EMPTY;
    const at = Number(hit.mapIp);
    const code = bytes.subarray(at, Math.min(at + 16, bytes.length));
    const len = insnLength(code, bytes[4] === 2 ? 64 : 32);
    return code.subarray(0, len);
  }

  /**
   * " sym+0xoff (dso)" for ip, as the columns ask. `inlined`: the name of an
   * inlined function at ip (perf prints it with the offset of the symbol
   * around it, and "(inlined)" in place of the dso).
   */
  text(c: SymbolColumns, pid: number, ip: bigint, kernel: boolean, inlined?: string): string {
    const r = this.lookup(pid, ip, kernel);
    const name = inlined ?? r.name;
    let out = '';
    if (c.sym) out += name === undefined ? ' [unknown]' : c.symoff ? ` ${name}+0x${r.off.toString(16)}` : ` ${name}`;
    if (c.dso && inlined === undefined) out += ` (${r.dso})`;
    if (c.srcline) out += this.srclines.text(r, ip, kernel);
    return inlined === undefined ? out : `${out} (inlined)`;
  }

  /**
   * A branch-stack address as perf's brstack fields print it (thread__find_map_fb: the kernel's maps for a
   * kernel address, else the process's): `name+0xoff` or `[unknown]`, its dso, and for brstackoff the offset
   * perf prints. `withSymbol`: perf looks the symbol up here (brstacksym), which loads the file's symbols.
   */
  branchAddr(pid: number, addr: bigint, withSymbol: boolean): BranchAddr {
    const kernel = addr >= 1n << 63n;
    const r = this.lookup(pid, addr, kernel, withSymbol);
    const symOff = r.name === undefined ? '[unknown]' : `${r.name}+0x${r.off.toString(16)}`;
    // dso->adjust_symbols: set once perf has loaded the file's ELF symbols (always, for user files); until
    // then, or when they cannot load, map__map_ip gives the offset in the file
    const adjusted = r.file !== undefined && this.loaded.has(r.file) && this.dsos.user(r.file) !== undefined;
    const offset = r.mapIp !== undefined && r.file !== undefined && !adjusted ? r.mapIp : addr;
    return { symOff, dso: r.dso, offset };
  }

  /** User files whose symbols perf has looked up (its dso__load ran): see branchAddr. */
  private readonly loaded = new Set<string>();
  private srclineLookup: SourceLines | undefined;
  private get srclines(): SourceLines {
    this.srclineLookup ??= new SourceLines(this.dsos);
    return this.srclineLookup;
  }
  /** machine__resolve: perf looks up the symbol of every sample's ip, which loads its file. */
  touch(pid: number, ip: bigint, kernel: boolean): void {
    this.lookup(pid, ip, kernel, true);
  }

  private lookup(
    pid: number,
    ip: bigint,
    kernel: boolean,
    load = true,
  ): { name?: string; off: bigint; dso: string; mapIp?: bigint; file?: string } {
    let name: string | undefined;
    let off = 0n;
    let dso = '[unknown]';
    let mapIp: bigint | undefined;
    let file: string | undefined;
    if (kernel) {
      const km = this.kernelMap;
      if (km && ip >= km.start && ip < km.end) {
        dso = '[kernel.kallsyms]';
        const table = this.dsos.kernel();
        const s = table?.find(ip);
        if (s) [name, off] = [s.name, ip - s.start];
        if (!this.kernelLoaded) this.fixupKernelMap(km, table);
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
        mapIp = hit.mapIp;
        if (!jit && !hit.identity) file = hit.filename;
        if (file !== undefined && load) this.loaded.add(file);
      }
    }
    return { name, off, dso, mapIp, file };
  }
}
