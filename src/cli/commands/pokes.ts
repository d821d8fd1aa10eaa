/**
 * perfpoke pokes -i DIR [--site ADDR] [--all-copies] [--json]: options and
 * loading only; the lines and JSON come from src/format/pokes-text.ts.
 */
import type { Command } from 'commander';
import { eachPokeView, formatPokeLine, pokeJsonLine, pokesNotes, writePokeLines } from '../../format/pokes-text.js';
import { loadWithProgress, resolveAddr } from '../machine-input.js';
import { quietOption, textPokeAbiOption, type TextPokeAbi } from '../options.js';
import { OutputSink } from '../output.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

export function register(program: Command): void {
  const cmd = program
    .command('pokes')
    .description('list TEXT_POKE events: time, cpu, addr, sym+off, old -> new bytes and instructions, kind')
    .option(
      '-i, --input <path>',
      `perf.data file, or a \`perf record --kcore\` directory (uses its kcore_dir); ${INPUT_DEFAULT_HELP}`,
    )
    .hook('preAction', fillDefaultInput)
    .option('--site <addr>', "only pokes touching this address (hex or symbol[+0xoff]): one site's history")
    .option('--json', 'JSON Lines: one {"type":"poke",…} object per poke (docs/json/poke.schema.json)')
    .option('--all-copies', "also list Linux 6.1's extra copies of a poke (one per extra text_poke event)")
    .addHelpText(
      'after',
      `
Kinds: jump-label, static-call, ftrace, bpf-trampoline, trampoline-create,
trampoline-remove, kprobe, optprobe, other. Instructions are AT&T syntax (as objdump -d).
When several events set text_poke, Linux 6.1 writes each poke once per event:
each poke is listed once (--all-copies: every copy, marked as such).
Example:
  perfpoke pokes -i perf.data.dir --site do_sys_open+0x10`,
    );
  textPokeAbiOption(cmd);
  quietOption(cmd).action(
    async (opts: {
      input: string;
      site?: string;
      json?: boolean;
      allCopies?: boolean;
      textPokeAbi: TextPokeAbi;
      quiet?: boolean;
    }) => {
      const m = await loadWithProgress(opts.input, opts);
      const site = opts.site !== undefined ? resolveAddr(m, opts.site) : undefined;
      // streamed: one line per poke as it is formatted, written in 64 KiB blocks
      const out = new OutputSink(undefined, { sync: true });
      const views = eachPokeView(m, { site, allCopies: opts.allCopies });
      if (opts.json) {
        for (const v of views) out.write(pokeJsonLine(v));
        return out.close();
      }
      for (const w of m.warnings) process.stderr.write(`perfpoke: warning: ${w}\n`);
      if (site === undefined && !opts.allCopies) writePokeLines(m, out);
      else for (const v of views) out.line(formatPokeLine(v));
      for (const l of pokesNotes(m, opts.allCopies ?? false)) out.line(l);
      return out.close();
    },
  );
}
