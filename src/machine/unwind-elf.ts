/**
 * The unwind tables of a mapped ELF file as perf 6.1's libunwind glue
 * (util/unwind-libunwind-local.c find_proc_info) reaches them: the file is
 * the dso's data file (the build-id cache's copy, else the path); `.eh_frame`
 * is used when the file has an `.eh_frame_hdr` (perf reads the search table
 * from it), else `.debug_frame`. A process address becomes a file address
 * as perf computes it: its offset in the file (ip - map start + pgoff) moved
 * by `.eh_frame_hdr`'s (address - offset).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CfiError, type Fde, findFde, parseCfi, type UnwindRow, unwindRow } from './dwarf-cfi.js';

interface Section {
  name: string;
  addr: bigint;
  offset: number;
  size: number;
  type: number;
}

const SHT_NOBITS = 8;

export class ElfUnwind {
  private ehFdes: Fde[] | undefined;
  private debugFdes: Fde[] | undefined;

  private constructor(
    readonly bytes: Uint8Array,
    private readonly eh: Section | undefined,
    private readonly debug: Section | undefined,
    /** vaddr - file offset, from .eh_frame_hdr (0 without one). */
    readonly bias: bigint,
    /** perf's elf_base_address: the first PT_LOAD's p_vaddr - p_offset. */
    private readonly elfBase: bigint,
    /** ET_EXEC: .debug_frame addresses are process addresses. */
    private readonly exec: boolean,
    /**
     * What perf's map__rip_2objdump adds to a file offset to ask addr2line:
     * .text's address - offset for ET_EXEC files (adjust_symbols), else 0.
     */
    readonly objdumpBias: bigint,
  ) {}

  static parse(bytes: Uint8Array): ElfUnwind | undefined {
    const secs = sections(bytes);
    if (!secs) return undefined;
    const hdr = secs.find((s) => s.name === '.eh_frame_hdr');
    const eh = hdr ? secs.find((s) => s.name === '.eh_frame' && s.type !== SHT_NOBITS) : undefined;
    const debug = secs.find((s) => s.name === '.debug_frame' && s.type !== SHT_NOBITS);
    const exec = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint16(16, true) === 2;
    const text = exec ? secs.find((s) => s.name === '.text') : undefined;
    const objdumpBias = text ? text.addr - BigInt(text.offset) : 0n;
    const bias = hdr ? hdr.addr - BigInt(hdr.offset) : 0n;
    return new ElfUnwind(bytes, eh, debug, bias, firstLoadBias(bytes), exec, objdumpBias);
  }

  /** Whether perf finds any table in this file (else it stops unwinding there). */
  get hasTables(): boolean {
    return this.eh !== undefined || this.debug !== undefined;
  }

  /**
   * The row for process address ip of the map at mapStart (mapIp: ip's file
   * offset): from .eh_frame, else .debug_frame (perf gives libunwind the map
   * start as the base of a shared object's .debug_frame); undefined: no FDE.
   */
  row(ip: bigint, mapStart: bigint, mapIp: bigint, loadBase?: bigint): UnwindRow | undefined {
    if (this.eh) {
      // the FDE search runs at ip - (load base - elf_base_address): a wrong base finds no FDE (or another one)
      const pc = loadBase === undefined ? mapIp + this.bias : BigInt.asUintN(64, ip - loadBase + this.elfBase);
      this.ehFdes ??= safeParse(this.bytes, this.eh, true);
      const f = findFde(this.ehFdes, pc);
      if (f) return unwindRow(this.bytes, f, pc, this.eh.addr, this.eh.offset);
    }
    if (this.debug) {
      const pc = this.exec ? ip : ip - mapStart;
      this.debugFdes ??= safeParse(this.bytes, this.debug, false);
      const f = findFde(this.debugFdes, pc);
      if (f) return unwindRow(this.bytes, f, pc, this.debug.addr, this.debug.offset);
    }
    return undefined;
  }

  /** 8 bytes at a file offset (perf's access_dso_mem), undefined past the end. */
  readU64(offset: bigint): bigint | undefined {
    if (offset < 0n || offset + 8n > BigInt(this.bytes.length)) return undefined;
    const o = Number(offset);
    return new DataView(this.bytes.buffer, this.bytes.byteOffset + o, 8).getBigUint64(0, true);
  }
}

/** The first PT_LOAD program header's p_vaddr - p_offset (symbol-elf.c elf_base_address), 0 without one. */
function firstLoadBias(buf: Uint8Array): bigint {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const phoff = Number(dv.getBigUint64(32, true));
  const phentsize = dv.getUint16(54, true);
  const phnum = dv.getUint16(56, true);
  for (let i = 0; i < phnum; i++) {
    const o = phoff + i * phentsize;
    if (phentsize < 56 || o + 56 > buf.length) return 0n;
    if (dv.getUint32(o, true) === 1) return dv.getBigUint64(o + 16, true) - dv.getBigUint64(o + 8, true);
  }
  return 0n;
}

function safeParse(bytes: Uint8Array, s: Section, eh: boolean): Fde[] {
  try {
    return parseCfi(bytes, s.offset, s.size, s.addr, eh);
  } catch (e) {
    if (e instanceof CfiError || e instanceof RangeError) return [];
    throw e;
  }
}

function sections(buf: Uint8Array): Section[] | undefined {
  if (buf.length < 64 || buf[0] !== 0x7f || buf[1] !== 0x45 || buf[2] !== 0x4c || buf[3] !== 0x46) return undefined;
  if (buf[4] !== 2 || buf[5] !== 1) return undefined;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const shoff = Number(dv.getBigUint64(40, true));
  const shentsize = dv.getUint16(58, true);
  const shnum = dv.getUint16(60, true);
  const shstrndx = dv.getUint16(62, true);
  if (shoff === 0 || shentsize < 64 || shoff + shnum * shentsize > buf.length) return undefined;
  const raw = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    raw.push({
      nameOff: dv.getUint32(o, true),
      type: dv.getUint32(o + 4, true),
      addr: dv.getBigUint64(o + 16, true),
      offset: Number(dv.getBigUint64(o + 24, true)),
      size: Number(dv.getBigUint64(o + 32, true)),
    });
  }
  const strs = raw[shstrndx];
  if (!strs) return undefined;
  const name = (off: number): string => {
    let s = '';
    for (let p = strs.offset + off; p < buf.length && buf[p] !== 0; p++) s += String.fromCharCode(buf[p]!);
    return s;
  };
  return raw.map((r) => ({ name: name(r.nameOff), addr: r.addr, offset: r.offset, size: r.size, type: r.type }));
}

/** The unwind tables of the dsos of a recording, loaded once each. */
export class DsoUnwindTables {
  private readonly cache = new Map<string, ElfUnwind | null>();
  private readonly cacheDir: string;

  constructor(
    private readonly buildIds: Map<string, string>,
    cacheDir?: string,
  ) {
    this.cacheDir = cacheDir ?? join(homedir(), '.debug');
  }

  /** The file perf's dso__data_get_fd opens: the build-id cache's copy, else the path. */
  get(filename: string): ElfUnwind | undefined {
    let u = this.cache.get(filename);
    if (u === undefined) {
      u = this.load(filename) ?? null;
      this.cache.set(filename, u);
    }
    return u ?? undefined;
  }

  private load(filename: string): ElfUnwind | undefined {
    const bid = this.buildIds.get(filename);
    const paths: string[] = [];
    const base = filename === '[vdso]' ? 'vdso' : 'elf';
    if (bid !== undefined)
      paths.push(
        join(this.cacheDir, '.build-id', bid.slice(0, 2), bid.slice(2), base),
        join(this.cacheDir, filename, bid, base),
      );
    if (filename.startsWith('/')) paths.push(filename);
    for (const p of paths) {
      if (!existsSync(p)) continue;
      try {
        const b = readFileSync(p);
        const u = ElfUnwind.parse(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
        if (u) return u;
      } catch {
        // unreadable: try the next place
      }
    }
    return undefined;
  }
}

export type { UnwindRow };
