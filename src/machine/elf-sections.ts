/**
 * The named section headers of a little-endian ELF64 file, for the readers
 * that need a section by name (the PLT's .rela.plt, .gnu_debuglink).
 */
export interface ElfSection {
  name: string;
  type: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

/** The section headers of a little-endian ELF64 file, named; undefined when it is not one. */
export function elfSections(buf: Uint8Array): { dv: DataView; secs: ElfSection[] } | undefined {
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
  const secs: ElfSection[] = [];
  for (let i = 0; i < shnum; i++) {
    const { nameOff, ...rest } = raw(i);
    secs.push({ name: cstr(buf, strs.offset + nameOff), ...rest });
  }
  return { dv, secs };
}

export function cstr(buf: Uint8Array, at: number): string {
  let e = at;
  while (e < buf.length && buf[e] !== 0) e++;
  return Buffer.from(buf.subarray(at, e)).toString('latin1');
}
