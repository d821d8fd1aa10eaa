/**
 * /proc/kallsyms text, as `perf record --kcore` copies it into
 * kcore_dir/kallsyms:
 *
 *   ffffffff81000000 T _text
 *   ffffffffc0a01000 t hdmi_driver_init	[snd_hda_codec_hdmi]
 *
 * One symbol per line: hex address, one-letter type, name, and for module
 * symbols a tab and the module in brackets. perf keeps only text and data
 * symbols (types T, W, D, B in either case; tools/perf/util/symbol.c
 * symbol_type__filter) and so do we.
 *
 * A host has ~120 k lines (5 MB): they are kept in columns (address halves,
 * type, name offsets into the text, module index) rather than one object and
 * three strings per line, which cost ~0.1 s and tens of MB per load. Names
 * are sliced from the text only when asked for.
 */
import { isAscii } from 'node:buffer';
import { readWholeFile } from '../io/read-whole.js';

export interface KallsymsEntry {
  addr: bigint;
  type: string;
  name: string;
  module?: string;
}

const NO_MODULE = -1;

export class Kallsyms {
  private constructor(
    /** The whole file; names are ranges of it. */
    private readonly text: string,
    readonly length: number,
    /** Address bits 63..32 and 31..0 of each line. */
    readonly addrHi: Uint32Array,
    readonly addrLo: Uint32Array,
    /** The type letter's char code. */
    readonly typeCode: Uint16Array,
    private readonly nameStart: Uint32Array,
    private readonly nameEnd: Uint32Array,
    /** Index into `modules`, or -1 for a kernel symbol. */
    readonly moduleIndex: Int32Array,
    readonly modules: readonly string[],
  ) {}

  /**
   * Parse the text, skipping the lines perf cannot parse. Lines are split on
   * '\n' only, as String.split('\n') would, so a '\r' stays in the name.
   */
  static parse(text: string): Kallsyms {
    const cap = countLines(text);
    const hi = new Uint32Array(cap);
    const lo = new Uint32Array(cap);
    const type = new Uint16Array(cap);
    const ns = new Uint32Array(cap);
    const ne = new Uint32Array(cap);
    const mod = new Int32Array(cap);
    const modules: string[] = [];
    const modIndex = new Map<string, number>();
    let n = 0;
    let pos = 0;
    while (pos <= text.length) {
      let eol = text.indexOf('\n', pos);
      if (eol < 0) eol = text.length;
      const line = pos;
      pos = eol + 1;
      // perf skips lines it cannot parse: "hex type name", hex of 1 to 16 digits
      let sp1 = line;
      let h = 0;
      let l = 0;
      for (; sp1 < eol; sp1++) {
        const v = hexValue(text.charCodeAt(sp1));
        if (v < 0) break;
        h = (h * 16 + (l >>> 28)) >>> 0;
        l = ((l << 4) | v) >>> 0;
      }
      const digits = sp1 - line;
      if (digits === 0 || digits > 16 || sp1 >= eol || text.charCodeAt(sp1) !== 32) continue;
      if (eol < sp1 + 4 || text.charCodeAt(sp1 + 2) !== 32) continue;
      const nameAt = sp1 + 3;
      const tab = indexIn(text, 9, nameAt, eol);
      hi[n] = h;
      lo[n] = l;
      type[n] = text.charCodeAt(sp1 + 1);
      ns[n] = nameAt;
      ne[n] = tab < 0 ? eol : tab;
      mod[n] = NO_MODULE;
      if (tab >= 0) {
        const name = moduleName(text, tab + 1, eol);
        let m = modIndex.get(name);
        if (m === undefined) {
          m = modules.length;
          modules.push(name);
          modIndex.set(name, m);
        }
        mod[n] = m;
      }
      n++;
    }
    return new Kallsyms(text, n, hi, lo, type, ns, ne, mod, modules);
  }

  name(i: number): string {
    return this.text.slice(this.nameStart[i]!, this.nameEnd[i]!);
  }

  nameLength(i: number): number {
    return this.nameEnd[i]! - this.nameStart[i]!;
  }

  /** The name's char code at k (NaN past its end). */
  nameCharCode(i: number, k: number): number {
    const at = this.nameStart[i]! + k;
    return at < this.nameEnd[i]! ? this.text.charCodeAt(at) : Number.NaN;
  }

  /** The name holds the char code c. */
  nameHas(i: number, c: number): boolean {
    return indexIn(this.text, c, this.nameStart[i]!, this.nameEnd[i]!) >= 0;
  }

  nameIs(i: number, name: string): boolean {
    return this.nameLength(i) === name.length && this.text.startsWith(name, this.nameStart[i]!);
  }

  module(i: number): string | undefined {
    const m = this.moduleIndex[i]!;
    return m === NO_MODULE ? undefined : this.modules[m];
  }

  addr(i: number): bigint {
    return (BigInt(this.addrHi[i]!) << 32n) | BigInt(this.addrLo[i]!);
  }

  type(i: number): string {
    return String.fromCharCode(this.typeCode[i]!);
  }

  entry(i: number): KallsymsEntry {
    return { addr: this.addr(i), type: this.type(i), name: this.name(i), module: this.module(i) };
  }

  /** Every line as an object (tests, small files). */
  entries(): KallsymsEntry[] {
    return Array.from({ length: this.length }, (_, i) => this.entry(i));
  }

  /** The address of a kernel symbol (e.g. `_text`, `_stext`), or undefined. */
  find(name: string): bigint | undefined {
    for (let i = 0; i < this.length; i++) {
      if (this.moduleIndex[i] === NO_MODULE && this.nameIs(i, name)) return this.addr(i);
    }
    return undefined;
  }
}

export function parseKallsyms(text: string): Kallsyms {
  return Kallsyms.parse(text);
}

/**
 * A kallsyms file's text: read as bytes and taken as Latin-1 when it is all
 * ASCII (as kallsyms always is: no UTF-8 decoding), else decoded as UTF-8.
 * Throws the fs error of an unreadable file.
 */
export function readKallsymsText(path: string): string {
  const b = readWholeFile(path);
  return isAscii(b) ? b.toString('latin1') : b.toString('utf8');
}

/** perf's symbol_type__filter: text and data symbols only (T, W, D, B in either case). */
export function isPerfSymbolCode(c: number): boolean {
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  const u = c & ~0x20;
  return letter && (u === 0x54 || u === 0x57 || u === 0x44 || u === 0x42);
}

/** The module of a module line: inside the first "[…]" after the tab, else the rest trimmed. */
function moduleName(text: string, from: number, eol: number): string {
  const open = indexIn(text, 0x5b, from, eol);
  const close = open < 0 ? -1 : indexIn(text, 0x5d, open + 1, eol);
  if (close >= 0) return text.slice(open + 1, close);
  return text.slice(from, eol).trim();
}

/** The first index of char code c in text[from, end), or -1 (indexOf would search on past the line). */
function indexIn(text: string, c: number, from: number, end: number): number {
  for (let k = from; k < end; k++) if (text.charCodeAt(k) === c) return k;
  return -1;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const u = c | 0x20;
  return u >= 97 && u <= 102 ? u - 87 : -1;
}

function countLines(text: string): number {
  let n = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return n;
}
