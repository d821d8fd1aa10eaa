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
 */
import { hexToBigInt } from '../io/hex.js';

export interface KallsymsEntry {
  addr: bigint;
  type: string;
  name: string;
  module?: string;
  /** 0-based line number, for error messages and stable ordering. */
  line: number;
}

export function parseKallsyms(text: string): KallsymsEntry[] {
  const out: KallsymsEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    const sp1 = line.indexOf(' ');
    if (sp1 <= 0 || line.length < sp1 + 4 || line[sp1 + 2] !== ' ') continue; // perf skips lines it cannot parse
    const hex = line.slice(0, sp1);
    if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) continue;
    const type = line[sp1 + 1]!;
    let name = line.slice(sp1 + 3);
    let module: string | undefined;
    const tab = name.indexOf('\t');
    if (tab >= 0) {
      const m = /\[([^\]]*)\]/.exec(name.slice(tab + 1));
      module = m ? m[1] : name.slice(tab + 1).trim();
      name = name.slice(0, tab);
    }
    out.push({ addr: hexToBigInt(hex), type, name, module, line: i });
  }
  return out;
}

/** perf's symbol_type__filter: text and data symbols only. */
export function isPerfSymbolType(type: string): boolean {
  const t = type.toUpperCase();
  return t === 'T' || t === 'W' || t === 'D' || t === 'B';
}

/** The address of a kernel symbol (e.g. `_text`, `_stext`), or undefined. */
export function findKallsym(entries: KallsymsEntry[], name: string): bigint | undefined {
  for (const e of entries) if (e.name === name && e.module === undefined) return e.addr;
  return undefined;
}
