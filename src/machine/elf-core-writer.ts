import { ByteWriter } from '../io/byte-writer.js';
import { ELF64_EHDR_SIZE, ELF64_PHDR_SIZE, ET_CORE, PF_R, PF_W, PF_X, PT_LOAD } from './elf-core.js';

/**
 * Write an ELF64 core file with one PT_LOAD per segment: the layout of
 * /proc/kcore that `perf record --kcore` copies. Used to build kcore_dir
 * fixtures, by the simulator and when trimming a qemu guest's kcore.
 * Segment data starts page-aligned, as in kcore.
 */
export interface CoreSegmentInput {
  vaddr: bigint;
  bytes: Uint8Array;
  flags?: number;
}

export function writeElfCore(segments: CoreSegmentInput[], opts: { le?: boolean; machine?: number } = {}): Uint8Array {
  const le = opts.le ?? true;
  const w = new ByteWriter(le, 4096);
  const EM_X86_64 = 62;
  // e_ident
  w.bytes(Uint8Array.of(0x7f, 0x45, 0x4c, 0x46, 2, le ? 1 : 2, 1, 0)).zeros(8);
  w.u16(ET_CORE)
    .u16(opts.machine ?? EM_X86_64)
    .u32(1);
  w.u64(0); // e_entry
  w.u64(ELF64_EHDR_SIZE); // e_phoff
  w.u64(0); // e_shoff
  w.u32(0); // e_flags
  w.u16(ELF64_EHDR_SIZE).u16(ELF64_PHDR_SIZE).u16(segments.length);
  w.u16(64).u16(0).u16(0); // e_shentsize, e_shnum, e_shstrndx
  const page = 4096;
  let off = Math.ceil((ELF64_EHDR_SIZE + segments.length * ELF64_PHDR_SIZE) / page) * page;
  const offsets: number[] = [];
  for (const s of segments) {
    offsets.push(off);
    w.u32(PT_LOAD).u32(s.flags ?? PF_R | PF_W | PF_X);
    w.u64(off).u64(s.vaddr).u64(0).u64(s.bytes.length).u64(s.bytes.length).u64(page);
    off += Math.ceil(s.bytes.length / page) * page;
  }
  segments.forEach((s, i) => {
    w.zeros(offsets[i]! - w.pos);
    w.bytes(s.bytes);
  });
  return w.finish().slice();
}
