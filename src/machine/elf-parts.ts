/**
 * An ELF file as the symbol loader reads it: an array as long as the file,
 * with only what the symbol, build-id, debuglink, PT_LOAD and PLT readers look
 * at filled in — the ELF header, the program and section header tables, the
 * symbol, string, note, relocation and dynamic sections, and .gnu_debuglink.
 * Code, data and DWARF (most of a library, nearly all of a separate debug
 * file) stay zero and are never read: loading libc's symbols read 6 MB of
 * files for ~1 MB of tables. The untouched part of the array costs no memory
 * (the pages of a large zeroed allocation are mapped on first write).
 *
 * A file that is not a little-endian ELF64 file, or not a regular file, is
 * read whole, as before.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { elfSections } from './elf-sections.js';
import { readBytes } from './symbol-sources.js';

const SHT_SYMTAB = 2;
const SHT_STRTAB = 3;
const SHT_RELA = 4;
const SHT_DYNAMIC = 6;
const SHT_NOTE = 7;
const SHT_NOBITS = 8;
const SHT_REL = 9;
const SHT_DYNSYM = 11;
const KEPT = new Set([SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_DYNAMIC, SHT_NOTE, SHT_REL, SHT_DYNSYM]);

/** The file's bytes with only its symbol-related parts read (see above), or undefined when it cannot be read. */
export function readElfParts(path: string): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size < 64) return readBytes(path);
    const buf = new Uint8Array(st.size);
    const fill = (offset: number, length: number): void => {
      const end = Math.min(buf.length, offset + length);
      for (let at = offset; at < end; ) {
        const got = readSync(fd, buf, at, end - at, at);
        if (got <= 0) break;
        at += got;
      }
    };
    fill(0, 64);
    if (buf[0] !== 0x7f || buf[1] !== 0x45 || buf[4] !== 2 || buf[5] !== 1) {
      fill(64, buf.length - 64);
      return buf;
    }
    const dv = new DataView(buf.buffer);
    const phoff = Number(dv.getBigUint64(32, true));
    const shoff = Number(dv.getBigUint64(40, true));
    const shentsize = dv.getUint16(58, true);
    const shnum = dv.getUint16(60, true);
    const shstrndx = dv.getUint16(62, true);
    fill(phoff, dv.getUint16(54, true) * dv.getUint16(56, true));
    fill(shoff, shnum * shentsize);
    // the section names first: the table says which sections to read
    const names = shoff + shstrndx * shentsize;
    if (shstrndx < shnum && names + 64 <= buf.length)
      fill(Number(dv.getBigUint64(names + 24, true)), Number(dv.getBigUint64(names + 32, true)));
    const secs = elfSections(buf)?.secs;
    if (!secs) {
      fill(64, buf.length - 64);
      return buf;
    }
    for (const s of secs)
      if (s.type !== SHT_NOBITS && (KEPT.has(s.type) || s.name === '.gnu_debuglink')) fill(s.offset, s.size);
    return buf;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
