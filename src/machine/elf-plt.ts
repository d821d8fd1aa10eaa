/**
 * perf 6.1's `name@plt` symbols (util/symbol-elf.c dso__synthesize_plt_symbols,
 * before 6.2's .plt.sec support): one symbol per `.rela.plt` entry, named
 * after the entry's `.dynsym` symbol (empty for IRELATIVE relocations, so
 * `@plt`), `.plt`'s sh_entsize long, the first at `.plt`'s file offset plus
 * one entry (the PLT header), in relocation order. Only from the runtime
 * file: one whose `.dynsym` is a real SHT_DYNSYM section linked from
 * `.rela.plt` (a separate debug file's are NOBITS).
 */
import { cstr, elfSections } from './elf-sections.js';
import type { KernelSymbol } from './symbols.js';

const SHT_RELA = 4;
const SHT_DYNSYM = 11;

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
  const sec = (i: number) => secs[i]!;
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
