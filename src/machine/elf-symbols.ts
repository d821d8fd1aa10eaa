/**
 * Function symbols of an ELF64 little-endian file the way perf 6.1 loads them
 * for a user-space dso (util/symbol-elf.c dso__load_sym_internal, then
 * symbols__fixup_duplicate and symbols__fixup_end): `.symtab` when the file
 * has one, else `.dynsym`; STT_FUNC, STT_GNU_IFUNC and STT_OBJECT symbols
 * with a name in an allocated section, and labels (named STT_NOTYPE) in code; for ET_EXEC/ET_REL files the value is
 * moved to its file offset (st_value - (sh_addr - sh_offset)), which is what
 * perf's map__map_ip gives for a sample address. No PLT synthesis, no C++
 * demangling (names print mangled where perf demangles them).
 */
import type { KernelSymbol } from './symbols.js';

export interface ElfSymbols {
  /** Sorted by start, duplicates resolved, zero sizes extended (perf's rules). */
  symbols: KernelSymbol[];
  /** The NT_GNU_BUILD_ID note, lowercase hex, if any. */
  buildId?: string;
  /** From .symtab (else .dynsym, or none): perf prefers a file with a .symtab. */
  fromSymtab: boolean;
  /** How perf's tree of these symbols was built (symbol-tree.ts): what lookups among overlapping ones follow. */
  order: InsertOrder;
}

/**
 * The starts of the symbols perf inserts, in symbol-table order (ids 0…),
 * and the ids symbols__fixup_duplicate erases, in the order it erases them.
 */
export interface InsertOrder {
  starts: bigint[];
  dropped: number[];
}

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const SHT_NOTE = 7;
const SHF_ALLOC = 2n;
const SHF_EXECINSTR = 4n;
const ET_EXEC = 2;
const ET_REL = 1;
const ET_DYN = 3;
const PT_LOAD = 1;

/**
 * The PT_LOAD segments' (vaddr, size, vaddr - offset), for moving a shared
 * object's symbols to file offsets as perf 6.1 does for user dsos
 * (dso__load_sym_internal with elf_read_program_header: the segment holding
 * the symbol; a symbol in none is dropped). A .bss variable sits at a file
 * offset below its address when the data segment's vaddr and offset differ.
 * The segments are the runtime file's: a debug file (objcopy
 * --only-keep-debug) keeps the addresses but not the offsets.
 */
export interface LoadSegment {
  vaddr: bigint;
  size: bigint;
  /** p_vaddr - p_offset */
  delta: bigint;
}

export function loadSegments(buf: Uint8Array): LoadSegment[] {
  if (buf.length < 64) return [];
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const phoff = Number(dv.getBigUint64(32, true));
  const phentsize = dv.getUint16(54, true);
  const phnum = dv.getUint16(56, true);
  const out: LoadSegment[] = [];
  for (let i = 0; i < phnum; i++) {
    const o = phoff + i * phentsize;
    if (phentsize < 56 || o + 56 > buf.length) break;
    if (dv.getUint32(o, true) !== PT_LOAD) continue;
    const offset = dv.getBigUint64(o + 8, true);
    const vaddr = dv.getBigUint64(o + 16, true);
    const filesz = dv.getBigUint64(o + 32, true);
    const memsz = dv.getBigUint64(o + 40, true);
    // biome-ignore lint/complexity/useMathMinMax: bigint sizes (Math.max takes numbers)
    const size = memsz > filesz ? memsz : filesz;
    if (size > 0n) out.push({ vaddr, size, delta: vaddr - offset });
  }
  return out;
}

interface Section {
  type: number;
  flags: bigint;
  addr: bigint;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

/** undefined when the bytes are not a little-endian ELF64 file. */
/** `runtime`: the PT_LOAD segments of the file that is mapped (loadSegments), when buf is its debug file. */
export function readElfSymbols(buf: Uint8Array, runtime?: LoadSegment[]): ElfSymbols | undefined {
  if (buf.length < 64 || buf[0] !== 0x7f || buf[1] !== 0x45 || buf[2] !== 0x4c || buf[3] !== 0x46) return undefined;
  if (buf[4] !== 2 || buf[5] !== 1) return undefined;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const type = dv.getUint16(16, true);
  const shoff = Number(dv.getBigUint64(40, true));
  const shentsize = dv.getUint16(58, true);
  const shnum = dv.getUint16(60, true);
  if (shoff === 0 || shentsize < 64 || shoff + shnum * shentsize > buf.length) return undefined;
  const secs: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    secs.push({
      type: dv.getUint32(o + 4, true),
      flags: dv.getBigUint64(o + 8, true),
      addr: dv.getBigUint64(o + 16, true),
      offset: Number(dv.getBigUint64(o + 24, true)),
      size: Number(dv.getBigUint64(o + 32, true)),
      link: dv.getUint32(o + 40, true),
      entsize: Number(dv.getBigUint64(o + 56, true)),
    });
  }
  const symtab = secs.find((s) => s.type === SHT_SYMTAB) ?? secs.find((s) => s.type === SHT_DYNSYM);
  const adjust = type === ET_EXEC || type === ET_REL;
  const segments = type === ET_DYN ? (runtime ?? loadSegments(buf)) : undefined;
  const out: (KernelSymbol & { bind: number; seq: number })[] = [];
  const strtab = symtab ? secs[symtab.link] : undefined;
  if (symtab && strtab && symtab.offset + symtab.size <= buf.length && strtab.offset + strtab.size <= buf.length) {
    const n = Math.floor(symtab.size / 24);
    const dec = new TextDecoder();
    for (let i = 1; i < n; i++) {
      const o = symtab.offset + i * 24;
      const nameOff = dv.getUint32(o, true);
      const info = buf[o + 4]!;
      const shndx = dv.getUint16(o + 6, true);
      const value = dv.getBigUint64(o + 8, true);
      const size = dv.getBigUint64(o + 16, true);
      const stt = info & 0xf;
      const vis = buf[o + 5]! & 3;
      // elf_sym__is_label: a named NOTYPE symbol, not hidden/internal, kept when its section is code
      const label = stt === 0 && vis !== 1 && vis !== 2;
      if (!(stt === 2 || stt === 10 || stt === 1 || label) || nameOff === 0 || shndx === 0 || shndx >= 0xff00) continue;
      const sec = secs[shndx];
      if (!sec || (sec.flags & SHF_ALLOC) === 0n) continue;
      if (label && (sec.flags & SHF_EXECINSTR) === 0n) continue;
      let end = strtab.offset + nameOff;
      while (end < strtab.offset + strtab.size && buf[end] !== 0) end++;
      const name = dec.decode(buf.subarray(strtab.offset + nameOff, end));
      let start = adjust ? value - (sec.addr - BigInt(sec.offset)) : value;
      if (segments) {
        const seg = segments.find((g) => value >= g.vaddr && value < g.vaddr + g.size);
        if (!seg) continue;
        start = value - seg.delta;
      }
      out.push({ start, end: start + size, name, bind: info >> 4, seq: out.length });
    }
  }
  const starts = out.map((s) => s.start);
  const dropped: number[] = [];
  const symbols = fixup(out, dropped);
  return {
    symbols,
    buildId: buildIdOf(buf, dv, secs),
    fromSymtab: symtab?.type === SHT_SYMTAB,
    order: { starts, dropped },
  };
}

/** symbols__fixup_duplicate then symbols__fixup_end (not kallsyms); the erased symbols' seqs onto `dropped`. */
function fixup(syms: (KernelSymbol & { bind: number; seq: number })[], dropped: number[]): KernelSymbol[] {
  syms.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.seq - b.seq));
  const kept: typeof syms = [];
  for (const s of syms) {
    const prev = kept[kept.length - 1];
    if (prev && prev.start === s.start) {
      // the loser is erased from perf's tree, in this order (InsertOrder.dropped)
      if (preferFirst(prev, s)) dropped.push(s.seq);
      else {
        dropped.push(prev.seq);
        kept[kept.length - 1] = s;
      }
      continue;
    }
    kept.push(s);
  }
  for (let i = 1; i < kept.length; i++) {
    const prev = kept[i - 1]!;
    if (prev.end === prev.start) prev.end = kept[i]!.start;
  }
  const last = kept[kept.length - 1];
  if (last && last.end === last.start) last.end = ((last.start + 4095n) / 4096n) * 4096n + 4096n;
  return kept.map(({ start, end, name }) => ({ start, end, name }));
}

/** choose_best_symbol: sized over zero, global over weak over local, fewer leading '_', longer name. */
function preferFirst(a: { start: bigint; end: bigint; name: string; bind: number }, b: typeof a): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (la > 0n && lb === 0n) return true;
  if (la === 0n && lb > 0n) return false;
  const weak = (x: typeof a): boolean => x.bind === 2;
  const global = (x: typeof a): boolean => x.bind === 1;
  if (!weak(a) && weak(b)) return true;
  if (weak(a) && !weak(b)) return false;
  if (global(a) && !global(b)) return true;
  if (!global(a) && global(b)) return false;
  const us = (s: string): number => s.length - s.replace(/^_+/, '').length;
  if (us(a.name) !== us(b.name)) return us(a.name) < us(b.name);
  if (a.name.length !== b.name.length) return a.name.length > b.name.length;
  return true;
}

function buildIdOf(buf: Uint8Array, dv: DataView, secs: Section[]): string | undefined {
  for (const s of secs) {
    if (s.type !== SHT_NOTE || s.offset + s.size > buf.length) continue;
    let o = s.offset;
    while (o + 12 <= s.offset + s.size) {
      const namesz = dv.getUint32(o, true);
      const descsz = dv.getUint32(o + 4, true);
      const ntype = dv.getUint32(o + 8, true);
      const name = o + 12;
      const desc = name + ((namesz + 3) & ~3);
      if (ntype === 3 && namesz === 4 && buf[name] === 0x47 && buf[name + 1] === 0x4e && buf[name + 2] === 0x55) {
        return Buffer.from(buf.subarray(desc, desc + descsz)).toString('hex');
      }
      o = desc + ((descsz + 3) & ~3);
    }
  }
  return undefined;
}
