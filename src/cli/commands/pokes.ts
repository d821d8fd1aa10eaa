/**
 * perfpoke pokes -i DIR [--site ADDR] [--all-copies] [--json]: options and
 * loading only; the lines and JSON come from src/format/pokes-text.ts. Also
 * home of the loader with a progress bar and the address parser that
 * `check` and `image` share.
 */
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { statSync } from 'node:fs';
import { loadMachine, type LoadOptions, type Machine } from '../../machine/from-perf-data.js';
import { parseAddr } from '../../machine/time-format.js';
import { eachPokeView, formatPokeLine, pokeJsonLine, pokesNotes } from '../../format/pokes-text.js';
import { OutputSink } from '../output.js';
import { UsageError } from '../errors.js';

/** Load with a progress bar on stderr when it is a TTY (shared by pokes, image, check). */
export async function loadWithProgress(
  input: string,
  abi?: string,
  more: Pick<LoadOptions, 'partial'> = {},
): Promise<Machine> {
  if (abi !== undefined && abi !== 'final' && abi !== 'rfc')
    throw new UsageError(`--text-poke-abi: expected final or rfc, got '${abi}'`);
  const textPokeAbi = abi as 'final' | 'rfc' | undefined;
  if (!process.stderr.isTTY) return loadMachine(input, { ...more, textPokeAbi });
  let total = 0;
  try {
    const st = statSync(input);
    total = st.isDirectory() ? statSync(`${input}/data`).size : st.size;
  } catch {
    // loadMachine reports the missing file
  }
  const bar = new SingleBar({ stream: process.stderr, format: 'reading {bar} {percentage}%', clearOnComplete: true });
  bar.start(Math.max(total, 1), 0);
  try {
    return await loadMachine(input, { ...more, textPokeAbi, onProgress: (b) => bar.update(Math.min(b, total)) });
  } finally {
    bar.stop();
  }
}

/** Address given as hex, or as `symbol` / `symbol+0xoff` from kcore_dir/kallsyms. */
export function resolveAddr(m: Machine, text: string): bigint {
  const t = text.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return parseAddr(t)!;
  const mm = /^([^+]+)(?:\+(0x[0-9a-fA-F]+|\d+))?$/.exec(t);
  if (mm && m.kcore) {
    const sym = m.kcore.symbols.symbols.find((s) => s.name === mm[1]);
    if (sym) return sym.start + (mm[2] ? BigInt(mm[2]) : 0n);
  }
  const a = parseAddr(t); // bare hex (ffffffff81000000) when no symbol has that name
  if (a !== undefined) return a;
  throw new UsageError(`cannot resolve address '${text}': give hex (0xffffffff81000000) or a kallsyms symbol[+0xoff]`);
}

export function register(program: Command): void {
  program
    .command('pokes')
    .description('list TEXT_POKE events: time, cpu, addr, sym+off, old -> new bytes and instructions, kind')
    .requiredOption('-i, --input <path>', 'perf.data file, or a `perf record --kcore` directory (uses its kcore_dir)')
    .option('--site <addr>', "only pokes touching this address (hex or symbol[+0xoff]): one site's history")
    .option('--json', 'JSON Lines: one {"type":"poke",…} object per poke (docs/json/poke.schema.json)')
    .option('--all-copies', "also list Linux 6.1's extra copies of a poke (one per extra text_poke event)")
    .option('--text-poke-abi <abi>', "'final' (upstream, type 20) or 'rfc' (the seed's type 19 form)", 'final')
    .addHelpText(
      'after',
      `
Kinds: jump-label, static-call, ftrace, bpf-trampoline, trampoline-create,
trampoline-remove, kprobe, optprobe, other. Instructions are AT&T syntax (as objdump -d).
When several events set text_poke, Linux 6.1 writes each poke once per event:
each poke is listed once (--all-copies: every copy, marked as such).
Example:
  perfpoke pokes -i perf.data.dir --site do_sys_open+0x10`,
    )
    .action(
      async (opts: { input: string; site?: string; json?: boolean; allCopies?: boolean; textPokeAbi?: string }) => {
        const m = await loadWithProgress(opts.input, opts.textPokeAbi);
        const site = opts.site !== undefined ? resolveAddr(m, opts.site) : undefined;
        // streamed: one line per poke as it is formatted, written in 64 KiB blocks
        const out = new OutputSink(undefined, { sync: true });
        const views = eachPokeView(m, { site, allCopies: opts.allCopies });
        if (opts.json) {
          for (const v of views) out.write(pokeJsonLine(v));
          return out.close();
        }
        for (const w of m.warnings) process.stderr.write(`perfpoke: warning: ${w}\n`);
        for (const v of views) out.line(formatPokeLine(v));
        for (const l of pokesNotes(m, opts.allCopies ?? false)) out.line(l);
        return out.close();
      },
    );
}
