/**
 * A synthetic /proc for kcore tests (this machine has no /proc/kcore): an
 * ELF64 core shaped like x86-64's (PT_NOTE + direct map, kernel text, module
 * area), kallsyms with _stext/_text/_etext, and two modules.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ByteWriter } from '../src/io/byte-writer.js';
import { tempDir } from './temp-dir.js';

export const PAGE = 4096;
// Three PT_LOADs like x86-64 kcore: direct map, kernel text mapping, module area.
export const SEGS = [
  { vaddr: 0xffff888000000000n, pages: 8 },
  { vaddr: 0xffffffff80000000n, pages: 64 },
  { vaddr: 0xffffffffa0000000n, pages: 32 },
];
// Kernel text from _stext (page 16 + 0x123) to _etext (page 40 + 0x10) of the text segment;
// modules from page 4 + 0x80 to page 9 + 0x200 of the module area.
export const STEXT = 0xffffffff80000000n + 16n * 4096n + 0x123n;
export const ETEXT = 0xffffffff80000000n + 40n * 4096n + 0x10n;
export const MOD_A = 0xffffffffa0000000n + 4n * 4096n + 0x80n;
export const MOD_B = 0xffffffffa0000000n + 7n * 4096n;
export const MOD_B_SIZE = 2n * 4096n + 0x200n; // ends inside page 9

/** Byte at (segment k, offset o): a pattern that differs per page and segment. */
export const pat = (k: number, o: number): number => (k * 71 + Math.floor(o / PAGE) * 13 + (o % 251)) & 0xff;

export function makeCore(): Uint8Array {
  const phnum = SEGS.length + 1; // + a PT_NOTE, which the copy must drop
  const w = new ByteWriter(true, 1 << 20);
  w.bytes(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0])).zeros(8);
  w.u16(4).u16(62).u32(1).u64(0n).u64(64).u64(0n).u32(0).u16(64).u16(56).u16(phnum).u16(64).u16(0).u16(0);
  const noteOff = 64 + 56 * phnum;
  w.u32(4).u32(0).u64(noteOff).u64(0n).u64(0n).u64(16).u64(0n).u64(0n); // PT_NOTE
  let off = PAGE;
  for (const s of SEGS) {
    w.u32(1)
      .u32(7)
      .u64(off)
      .u64(s.vaddr)
      .u64(0n)
      .u64(s.pages * PAGE)
      .u64(s.pages * PAGE)
      .u64(PAGE);
    off += s.pages * PAGE;
  }
  w.zeros(16); // note body
  w.alignTo(PAGE);
  SEGS.forEach((s, k) => {
    const b = new Uint8Array(s.pages * PAGE);
    for (let o = 0; o < b.length; o++) b[o] = pat(k, o);
    w.bytes(b);
  });
  return w.finish().slice();
}

export function fakeProc(): string {
  const dir = tempDir('perfpoke-kcore-');
  writeFileSync(join(dir, 'kcore'), makeCore());
  const hex = (v: bigint): string => v.toString(16).padStart(16, '0');
  writeFileSync(
    join(dir, 'kallsyms'),
    [
      `${hex(STEXT)} T _stext`,
      `${hex(STEXT)} T _text`,
      `${hex(STEXT + 0x40n)} T start_kernel`,
      `${hex(ETEXT)} T _etext`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'modules'),
    [`mod_b ${MOD_B_SIZE} 0 - Live 0x${hex(MOD_B)}`, `mod_a 4096 1 - Live 0x${hex(MOD_A)}`, ''].join('\n'),
  );
  return dir;
}
