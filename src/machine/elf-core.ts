import { ByteReader } from '../io/byte-reader.js';
import { FormatError } from '../io/errors.js';

/**
 * The PT_LOAD segments of an ELF64 core file such as /proc/kcore, which
 * `perf record --kcore` copies (trimmed to kernel and module text) into
 * `kcore_dir/kcore`. Each segment maps kernel virtual addresses
 * [vaddr, vaddr + bytes.length) to file bytes; p_memsz beyond p_filesz has
 * no bytes in the file and is left out, as perf's kcore reader does.
 */
export interface CoreSegment {
  vaddr: bigint;
  /** The segment's file bytes (a view into the file buffer, no copy). */
  bytes: Uint8Array;
  /** ELF p_flags (PF_X = 1, PF_W = 2, PF_R = 4). */
  flags: number;
}

export const ELF_MAGIC = 0x464c457f; // "\x7fELF" read little-endian
export const ET_CORE = 4;
export const PT_LOAD = 1;
export const PF_X = 1;
export const PF_W = 2;
export const PF_R = 4;
export const ELF64_EHDR_SIZE = 64;
export const ELF64_PHDR_SIZE = 56;

/**
 * Parse an ELF64 core file (either byte order). Throws FormatError naming the
 * structure and offset: 'bad-magic' for a non-ELF or ELF32 file, 'truncated'
 * when the headers run past the end, 'bad-size' for a segment whose file
 * bytes lie outside the file.
 */
export function readElfCore(file: Uint8Array, fileName?: string): CoreSegment[] {
  try {
    return parse(file);
  } catch (e) {
    if (e instanceof FormatError && fileName) throw e.withFile(fileName);
    throw e;
  }
}

/**
 * Check e_ident (magic, ELFCLASS64, byte order) of an ELF file's first bytes
 * and return whether it is little-endian. Shared by this reader and the
 * recorder's /proc/kcore reader (src/record/kcore-dir.ts).
 */
export function elf64ByteOrder(ident: Uint8Array, file?: string): { le: boolean } {
  if (ident.length < 16 || ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) {
    throw new FormatError({ kind: 'bad-magic', offset: 0, structure: 'Elf64_Ehdr', expected: '"\\x7fELF"', file });
  }
  if (ident[4] !== 2) {
    throw new FormatError({
      kind: 'unsupported',
      offset: 4,
      structure: 'Elf64_Ehdr.e_ident[EI_CLASS]',
      actual: ident[4]!,
      expected: '2 (ELFCLASS64)',
      file,
    });
  }
  if (ident[5] !== 1 && ident[5] !== 2) {
    throw new FormatError({
      kind: 'bad-value',
      offset: 5,
      structure: 'Elf64_Ehdr.e_ident[EI_DATA]',
      actual: ident[5]!,
      expected: '1 or 2',
      file,
    });
  }
  return { le: ident[5] === 1 };
}

function parse(file: Uint8Array): CoreSegment[] {
  const { le } = elf64ByteOrder(file);
  const r = new ByteReader(file, le, 0, 'Elf64_Ehdr');
  r.need(ELF64_EHDR_SIZE);
  r.seek(16);
  r.u16(); // e_type: kcore is ET_CORE, but perf accepts any ELF with PT_LOADs
  r.u16(); // e_machine
  r.u32(); // e_version
  r.u64(); // e_entry
  const phoff = r.u64n('Elf64_Ehdr.e_phoff');
  r.u64(); // e_shoff
  r.u32(); // e_flags
  r.u16(); // e_ehsize
  const phentsize = r.u16();
  const phnum = r.u16();
  if (phnum === 0xffff) {
    throw new FormatError({
      kind: 'unsupported',
      offset: 56,
      structure: 'Elf64_Ehdr.e_phnum',
      actual: 'PN_XNUM',
      expected: 'fewer than 65535 program headers',
    });
  }
  if (phnum > 0 && phentsize < ELF64_PHDR_SIZE) {
    throw new FormatError({
      kind: 'bad-size',
      offset: 54,
      structure: 'Elf64_Ehdr.e_phentsize',
      actual: phentsize,
      expected: `≥ ${ELF64_PHDR_SIZE}`,
    });
  }
  if (phoff + phnum * phentsize > file.length) {
    throw new FormatError({
      kind: 'truncated',
      offset: phoff,
      structure: 'Elf64_Phdr table',
      expected: `${phnum} × ${phentsize} bytes`,
      actual: `file is ${file.length} bytes`,
    });
  }
  const segs: CoreSegment[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    const p = new ByteReader(file.subarray(at, at + ELF64_PHDR_SIZE), le, at, `Elf64_Phdr[${i}]`);
    const type = p.u32();
    const flags = p.u32();
    const offset = p.u64n();
    const vaddr = p.u64();
    p.u64(); // p_paddr
    const filesz = p.u64n();
    if (type !== PT_LOAD || filesz === 0) continue;
    if (offset + filesz > file.length) {
      throw new FormatError({
        kind: 'bad-size',
        offset: at,
        structure: `Elf64_Phdr[${i}] (PT_LOAD)`,
        actual: `0x${offset.toString(16)}+0x${filesz.toString(16)}`,
        expected: `within the file (0x${file.length.toString(16)} bytes)`,
      });
    }
    segs.push({ vaddr, bytes: file.subarray(offset, offset + filesz), flags });
  }
  segs.sort((a, b) => (a.vaddr < b.vaddr ? -1 : a.vaddr > b.vaddr ? 1 : 0));
  return segs;
}
