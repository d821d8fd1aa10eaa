/**
 * perf 6.1's `name@plt` symbols (util/symbol-elf.c dso__synthesize_plt_symbols,
 * before 6.2's .plt.sec support): one symbol per `.rela.plt` entry, named
 * after the entry's `.dynsym` symbol (empty for IRELATIVE relocations, so
 * `@plt`), `.plt`'s sh_entsize long, the first at `.plt`'s file offset plus
 * one entry (the PLT header), in relocation order. Only from the runtime
 * file: one whose `.dynsym` is a real SHT_DYNSYM section linked from
 * `.rela.plt` (a separate debug file's are NOBITS).
 */
import type { KernelSymbol } from './symbols.js';

const SHT_RELA = 4;
const SHT_DYNSYM = 11;

interface Section {
  name: string;
  type: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

/** The section headers of a little-endian ELF64 file, named; undefined when it is not one. */
function elfSections(buf: Uint8Array): { dv: DataView; secs: Section[] } | undefined {
  if (buf.length < 64 || buf[0] !== 0x7f || buf[1] !== 0x45 || buf[4] !== 2 || buf[5] !== 1) return undefined;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const shoff = Number(dv.getBigUint64(40, true));
  const shentsize = dv.getUint16(58, true);
  const shnum = dv.getUint16(60, true);
  const shstrndx = dv.getUint16(62, true);
  if (shoff === 0 || shentsize < 64 || shoff + shnum * shentsize > buf.length || shstrndx >= shnum) return undefined;
  const raw = (i: number) => {
    const o = shoff + i * shentsize;
    return {
      nameOff: dv.getUint32(o, true),
      type: dv.getUint32(o + 4, true),
      offset: Number(dv.getBigUint64(o + 24, true)),
      size: Number(dv.getBigUint64(o + 32, true)),
      link: dv.getUint32(o + 40, true),
      entsize: Number(dv.getBigUint64(o + 56, true)),
    };
  };
  const strs = raw(shstrndx);
  const secs: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const { nameOff, ...rest } = raw(i);
    secs.push({ name: cstr(buf, strs.offset + nameOff), ...rest });
  }
  return { dv, secs };
}

function cstr(buf: Uint8Array, at: number): string {
  let e = at;
  while (e < buf.length && buf[e] !== 0) e++;
  return Buffer.from(buf.subarray(at, e)).toString('latin1');
}

/**
 * perf's symsrc__possibly_runtime on x86: the file has a `.dynsym` section of
 * type SHT_DYNSYM (a separate debug file's is NOBITS). dso__load takes the
 * PLT from the first such candidate.
 */
export function hasRealDynsym(buf: Uint8Array): boolean {
  return elfSections(buf)?.secs.some((s) => s.name === '.dynsym' && s.type === SHT_DYNSYM) ?? false;
}

export function pltSymbols(buf: Uint8Array): KernelSymbol[] {
  const elf = elfSections(buf);
  if (!elf) return [];
  const { dv, secs } = elf;
  const shnum = secs.length;
  const sec = (i: number): Section => secs[i]!;
  const rela = secs.find((s) => s.name === '.rela.plt');
  const plt = secs.find((s) => s.name === '.plt');
  if (!rela || !plt || rela.type !== SHT_RELA || rela.entsize < 24 || rela.link >= shnum) return [];
  const dynsym = sec(rela.link);
  if (dynsym.type !== SHT_DYNSYM || dynsym.link >= shnum) return [];
  const dynstr = sec(dynsym.link);
  const entry = BigInt(plt.entsize);
  let at = BigInt(plt.offset) + entry;
  const out: KernelSymbol[] = [];
  const n = Math.floor(rela.size / rela.entsize);
  for (let i = 0; i < n; i++) {
    const o = rela.offset + i * rela.entsize;
    if (o + 24 > buf.length) break;
    const symIdx = Number(dv.getBigUint64(o + 8, true) >> 32n);
    const so = dynsym.offset + symIdx * 24;
    const name = so + 24 <= buf.length ? cstr(buf, dynstr.offset + dv.getUint32(so, true)) : '';
    out.push({ start: at, end: at + entry, name: `${name}@plt` });
    at += entry;
  }
  return out;
}
