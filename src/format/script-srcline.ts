/**
 * The `srcline` field of `perf script`: "\n  file:line" after an address's
 * symbol, as perf 6.1 prints it (map__fprintf_srcline → get_srcline): the
 * first record binutils addr2line gives for the address in the dso's symbol
 * file (basename and line number), else the dso's short name and the
 * address perf asks about (`libc.so.6[262c0]`, `[kernel.kallsyms][ffff…]`).
 * Like perf, a dso stops being asked after 123 failures in a row before any
 * success (dso->a2l_fails, A2L_FAIL_LIMIT).
 */
import { basename } from 'node:path';
import { Addr2Line } from '../machine/addr2line.js';
import type { DsoSymbols } from '../machine/dso-symbols.js';

const A2L_FAIL_LIMIT = 123;

/** What srcline needs of an address lookup (ScriptSymbols.lookup). */
export interface SrclineAddr {
  dso: string;
  mapIp?: bigint;
  /** The mapped ELF file (not anonymous memory, not the kernel). */
  file?: string;
}

export class SourceLines {
  private a2l: Addr2Line | undefined;
  /** perf's dso->a2l_fails: 1 at first, 0 after a success. */
  private readonly fails = new Map<string, number>();

  constructor(private readonly dsos: DsoSymbols) {}

  text(r: SrclineAddr, ip: bigint, kernel: boolean): string {
    if (r.dso === '[unknown]') return ''; // no map: perf prints nothing
    const short = r.dso.startsWith('[') ? r.dso : basename(r.dso);
    const bias = r.file ? (this.dsos.unwindTables().get(r.file)?.objdumpBias ?? 0n) : 0n;
    // map__rip_2objdump: the file address for a mapped file, the address itself for the kernel and anon maps
    const addr = !kernel && r.file && r.mapIp !== undefined ? r.mapIp + bias : ip;
    const line = this.line(r, addr) ?? `${short}[${addr.toString(16)}]`;
    // SRCLINE_UNKNOWN ("??:0", addr2line knew the function but not the line) is not printed
    return line === '??:0' ? '' : `\n  ${line}`;
  }

  private line(r: SrclineAddr, addr: bigint): string | undefined {
    if (!r.file) return undefined;
    const fails = this.fails.get(r.dso) ?? 1;
    if (fails > A2L_FAIL_LIMIT) return undefined;
    const file = this.dsos.symsrcFile(r.file);
    this.a2l ??= new Addr2Line();
    const rec = file.startsWith('[') ? undefined : this.a2l.lookup(file, addr)?.[0];
    const colon = rec ? rec.where.lastIndexOf(':') : -1;
    if (!rec || colon < 0) {
      if (fails) this.fails.set(r.dso, fails + 1);
      return undefined;
    }
    this.fails.set(r.dso, 0);
    // strrchr(':') then strtoul: "file.c:32 (discriminator 1)" is line 32
    const n = Number.parseInt(rec.where.slice(colon + 1), 10);
    return `${basename(rec.where.slice(0, colon))}:${Number.isNaN(n) ? 0 : n}`;
  }
}
