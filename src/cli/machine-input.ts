/**
 * `-i` for the commands that need the kernel as recorded (pokes, check,
 * image): a perf.data file or a `perf record --kcore` directory loaded into a
 * Machine, with the one progress reporter, and addresses given as hex or as
 * kallsyms symbol[+offset].
 */
import { statSync } from 'node:fs';
import { loadMachine, type LoadOptions, type Machine } from '../machine/from-perf-data.js';
import { parseAddr } from '../machine/time-format.js';
import { UsageError } from './errors.js';
import type { TextPokeAbi } from './options.js';
import { startProgress } from './progress.js';

/** Load `input` (file or --kcore directory), with a progress bar on a terminal unless `quiet`. */
export async function loadWithProgress(
  input: string,
  opts: { textPokeAbi?: TextPokeAbi; quiet?: boolean } & Pick<LoadOptions, 'partial'> = {},
): Promise<Machine> {
  let total = 0;
  try {
    const st = statSync(input);
    total = st.isDirectory() ? statSync(`${input}/data`).size : st.size;
  } catch {
    // loadMachine reports the missing file
  }
  const bar = startProgress('reading', total, { quiet: opts.quiet });
  try {
    return await loadMachine(input, {
      partial: opts.partial,
      textPokeAbi: opts.textPokeAbi,
      onProgress: (b) => bar.update(b),
    });
  } finally {
    bar.stop();
  }
}

/** Address given as hex, or as `symbol` / `symbol+0xoff` from kcore_dir/kallsyms. */
export function resolveAddr(m: Machine, text: string): bigint {
  const t = text.trim();
  const hex = /^0x[0-9a-f]+$/i.test(t) ? parseAddr(t) : undefined;
  if (hex !== undefined) return hex;
  const mm = /^([^+]+)(?:\+(0x[0-9a-fA-F]+|\d+))?$/.exec(t);
  if (mm && m.kcore) {
    const sym = m.kcore.symbols.findName(mm[1]!, false);
    if (sym) return sym.start + (mm[2] ? BigInt(mm[2]) : 0n);
  }
  const a = parseAddr(t); // bare hex (ffffffff81000000) when no symbol has that name
  if (a !== undefined) return a;
  throw new UsageError(`cannot resolve address '${text}': give hex (0xffffffff81000000) or a kallsyms symbol[+0xoff]`);
}
