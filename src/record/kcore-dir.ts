/**
 * `perf record --kcore`: copy the kernel's code as it was when recording
 * started into `<out>/kcore_dir/{kcore,kallsyms,modules}`, so a decoder can
 * later apply TEXT_POKE records on top of the real bytes.
 *
 * /proc/kcore is an ELF64 core whose PT_LOAD segments map all of kernel
 * memory (terabytes of virtual size). Like perf's kcore_copy (util/symbol-elf.c)
 * we keep only two windows: the kernel text `_stext.._etext` and the module
 * area from the lowest to the highest module in /proc/modules, each cut out
 * of the PT_LOAD that holds it and rounded to pages, and write them as a
 * small ELF64 core with one PT_LOAD per window.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

import { ByteReader } from '../io/byte-reader.js';
import { ByteWriter } from '../io/byte-writer.js';
import { FormatError } from '../io/errors.js';
import { kernelLayoutFromKallsyms, parseProcModules } from './synthesize.js';

export const KCORE_PATH = '/proc/kcore';
/**
 * perf's modes (kcore_copy: the directory 0700, copyfile_mode(…, 0400)):
 * the copies hold real kernel addresses, which must not become readable to
 * other users.
 */
export const KCORE_DIR_MODE = 0o700;
export const KCORE_FILE_MODE = 0o400;
const PAGE = 4096n;
const PT_LOAD = 1;
const ELF_HEADER_SIZE = 64;
const PHDR_SIZE = 56;
const PF_R = 4;
const PF_W = 2;
const PF_X = 1;

/** /proc/kcore missing (or unreadable): the CLI prints the message and exits 2. */
export class KcoreUnavailableError extends Error {
  readonly exitCode = 2;
}

export interface ElfSegment {
  type: number;
  flags: number;
  offset: bigint;
  vaddr: bigint;
  paddr: bigint;
  filesz: bigint;
  memsz: bigint;
  align: bigint;
}

export interface ElfCore {
  le: boolean;
  machine: number;
  osabi: number;
  segments: ElfSegment[];
}

export interface AddressRange {
  start: bigint;
  end: bigint;
}

/** A read at an absolute offset; returns fewer bytes only at end of input. */
export type ReadAt = (offset: number, length: number) => Uint8Array;

export function fileReader(fd: number): ReadAt {
  return (offset, length) => {
    const b = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, b, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return b.subarray(0, got);
  };
}

/** Parse an ELF64 header and program headers. Throws FormatError on anything that is not an ELF64 core. */
export function readElfCore(read: ReadAt, file = KCORE_PATH): ElfCore {
  const ident = read(0, ELF_HEADER_SIZE);
  if (ident.length < 16 || ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) {
    throw new FormatError({ kind: 'bad-magic', offset: 0, structure: 'Elf64_Ehdr', expected: '"\\x7fELF"', file });
  }
  if (ident[4] !== 2)
    throw new FormatError({
      kind: 'unsupported',
      offset: 4,
      structure: 'Elf64_Ehdr.e_ident[EI_CLASS]',
      actual: ident[4]!,
      expected: '2 (ELFCLASS64)',
      file,
    });
  if (ident[5] !== 1 && ident[5] !== 2)
    throw new FormatError({
      kind: 'bad-value',
      offset: 5,
      structure: 'Elf64_Ehdr.e_ident[EI_DATA]',
      actual: ident[5]!,
      expected: '1 or 2',
      file,
    });
  const le = ident[5] === 1;
  const r = new ByteReader(ident, le, 0, 'Elf64_Ehdr');
  r.seek(16);
  const type = r.u16();
  const machine = r.u16();
  r.u32(); // e_version
  r.u64(); // e_entry
  const phoff = r.u64n();
  r.u64(); // e_shoff
  r.u32(); // e_flags
  r.u16(); // e_ehsize
  const phentsize = r.u16();
  const phnum = r.u16();
  if (type !== 4)
    throw new FormatError({
      kind: 'unsupported',
      offset: 16,
      structure: 'Elf64_Ehdr.e_type',
      actual: type,
      expected: '4 (ET_CORE)',
      file,
    });
  if (phentsize !== PHDR_SIZE)
    throw new FormatError({
      kind: 'bad-size',
      offset: 54,
      structure: 'Elf64_Ehdr.e_phentsize',
      actual: phentsize,
      expected: `${PHDR_SIZE}`,
      file,
    });
  const table = read(phoff, phnum * PHDR_SIZE);
  const p = new ByteReader(table, le, phoff, 'Elf64_Phdr');
  const segments: ElfSegment[] = [];
  for (let i = 0; i < phnum; i++) {
    segments.push({
      type: p.u32(),
      flags: p.u32(),
      offset: p.u64(),
      vaddr: p.u64(),
      paddr: p.u64(),
      filesz: p.u64(),
      memsz: p.u64(),
      align: p.u64(),
    });
  }
  return { le, machine, osabi: ident[7]!, segments };
}

export interface TrimPlan {
  /** Output segments: where each comes from in the source and where it goes. */
  pieces: { vaddr: bigint; size: bigint; srcOffset: bigint; flags: number }[];
}

const down = (v: bigint): bigint => v - (v % PAGE);
const up = (v: bigint): bigint => down(v + PAGE - 1n);

/**
 * Cut each range (page-aligned) out of the PT_LOAD that holds its start;
 * a range whose start no PT_LOAD holds is skipped, as perf does when a
 * window is not mapped. Overlapping windows are merged.
 */
export function planTrim(core: ElfCore, ranges: AddressRange[]): TrimPlan {
  const loads = core.segments.filter((s) => s.type === PT_LOAD && s.filesz > 0n);
  const windows = ranges
    .filter((r) => r.end > r.start)
    .map((r) => ({ start: down(r.start), end: up(r.end) }))
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: AddressRange[] = [];
  for (const w of windows) {
    const last = merged.at(-1);
    // biome-ignore lint/complexity/useMathMinMax: bigint addresses (Math.max takes numbers)
    if (last && w.start <= last.end) last.end = w.end > last.end ? w.end : last.end;
    else merged.push({ ...w });
  }
  const pieces: TrimPlan['pieces'] = [];
  for (const w of merged) {
    const seg = loads.find((s) => w.start >= s.vaddr && w.start < s.vaddr + s.filesz);
    if (!seg) continue;
    const segEnd = seg.vaddr + seg.filesz;
    // biome-ignore lint/complexity/useMathMinMax: bigint addresses
    const end = w.end < segEnd ? w.end : segEnd;
    pieces.push({
      vaddr: w.start,
      size: end - w.start,
      srcOffset: seg.offset + (w.start - seg.vaddr),
      flags: seg.flags,
    });
  }
  return { pieces };
}

/**
 * Write the trimmed core to `dstPath`: ELF header, one PT_LOAD per piece,
 * then each piece's bytes at a page-aligned offset, copied in 1 MiB steps so
 * memory stays bounded. Returns the plan it wrote.
 */
export function writeTrimmedCore(read: ReadAt, core: ElfCore, plan: TrimPlan, dstPath: string): void {
  const w = new ByteWriter(core.le, 4096);
  w.bytes(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, core.le ? 1 : 2, 1, core.osabi])).zeros(8);
  w.u16(4).u16(core.machine).u32(1).u64(0n).u64(ELF_HEADER_SIZE).u64(0n).u32(0);
  w.u16(ELF_HEADER_SIZE).u16(PHDR_SIZE).u16(plan.pieces.length).u16(64).u16(0).u16(0);
  let at = up(BigInt(ELF_HEADER_SIZE + PHDR_SIZE * plan.pieces.length));
  const offsets: bigint[] = [];
  for (const p of plan.pieces) {
    offsets.push(at);
    w.u32(PT_LOAD)
      .u32(p.flags || PF_R | PF_W | PF_X)
      .u64(at)
      .u64(p.vaddr)
      .u64(0n)
      .u64(p.size)
      .u64(p.size)
      .u64(PAGE);
    at = up(at + p.size);
  }
  const fd = openSync(dstPath, 'w', KCORE_FILE_MODE);
  try {
    writeSync(fd, w.finish(), 0, w.pos, 0);
    plan.pieces.forEach((p, k) => {
      const step = 1 << 20;
      for (let done = 0n; done < p.size; ) {
        const n = Number(p.size - done < BigInt(step) ? p.size - done : BigInt(step));
        const src = read(Number(p.srcOffset + done), n);
        const buf = src.length === n ? src : Buffer.concat([src, Buffer.alloc(n - src.length)]);
        writeSync(fd, buf, 0, n, Number(offsets[k]! + done));
        done += BigInt(n);
      }
    });
  } finally {
    closeSync(fd);
  }
}

/** The windows perf keeps: kernel text and the span of all modules. */
export function kcoreWindows(kallsyms: string, modules: string): AddressRange[] {
  const out: AddressRange[] = [];
  const k = kernelLayoutFromKallsyms(kallsyms);
  if (k) out.push({ start: k.text, end: k.etext });
  const mods = parseProcModules(modules);
  if (mods.length > 0) {
    let lo = mods[0]!.start;
    let hi = 0n;
    for (const m of mods) {
      if (m.start < lo) lo = m.start;
      if (m.start + m.size > hi) hi = m.start + m.size;
    }
    out.push({ start: lo, end: hi });
  }
  return out;
}

/**
 * Create `dest` with kallsyms, modules and the trimmed kcore taken from
 * `procRoot` (normally /proc). Throws KcoreUnavailableError when kcore is
 * missing, FormatError when it is not an ELF64 core.
 */
export function copyKcoreDir(dest: string, procRoot = '/proc'): void {
  const kcore = join(procRoot, 'kcore');
  if (!existsSync(kcore))
    throw new KcoreUnavailableError(
      `perfpoke record --kcore: ${kcore} does not exist on this kernel; record without --kcore`,
    );
  mkdirSync(dest, { recursive: true, mode: KCORE_DIR_MODE });
  chmodSync(dest, KCORE_DIR_MODE); // an existing directory keeps its mode under mkdir
  const kallsyms = readFileSync(join(procRoot, 'kallsyms'), 'utf8');
  let modules = '';
  try {
    modules = readFileSync(join(procRoot, 'modules'), 'utf8');
  } catch {
    modules = ''; // a kernel without loadable modules
  }
  writeFileSync(join(dest, 'kallsyms'), kallsyms, { mode: KCORE_FILE_MODE });
  // the text read above, not copyFileSync: /proc files report size 0, and a copy by size writes an empty
  // `modules` — which makes perf reject the kcore (validate_kcore_modules) and name symbols differently
  writeFileSync(join(dest, 'modules'), modules, { mode: KCORE_FILE_MODE });
  chmodSync(join(dest, 'modules'), KCORE_FILE_MODE); // an existing file keeps its mode under writeFile
  const windows = kcoreWindows(kallsyms, modules);
  if (windows.length === 0)
    throw new KcoreUnavailableError(
      `perfpoke record --kcore: ${join(procRoot, 'kallsyms')} shows no _stext/_etext addresses (kptr_restrict?); run as root`,
    );
  const fd = openSync(kcore, 'r');
  try {
    const read = fileReader(fd);
    const core = readElfCore(read, kcore);
    writeTrimmedCore(read, core, planTrim(core, windows), join(dest, 'kcore'));
  } finally {
    closeSync(fd);
  }
}
