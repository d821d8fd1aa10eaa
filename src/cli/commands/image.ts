/**
 * perfpoke image -i DIR --addr A --len N [--time T] [--json]
 *
 * The kernel code over [A, A+N) as a CPU saw it at time T (default: end of
 * the recording): kcore_dir bytes with every poke up to T applied, listed as
 * instructions. T is perf's "seconds.microseconds" (as perf script prints
 * times) or raw nanoseconds.
 */
import type { Command } from 'commander';
import { CodeImage } from '../../machine/code-image.js';
import { parsePerfTime } from '../../machine/time-format.js';
import { imageJsonLines, imageListing, imageTextLines } from '../../format/image-text.js';
import { UsageError } from '../errors.js';
import { jsonOption, quietOption, textPokeAbiOption, type TextPokeAbi } from '../options.js';
import { withOutput } from '../output.js';
import { loadWithProgress, resolveAddr } from '../machine-input.js';

const MAX_LEN = 1 << 20;

export function register(program: Command): void {
  const cmd = program
    .command('image')
    .description('bytes and disassembly of kernel code at an address, at a point in time (kcore_dir + pokes)')
    .requiredOption(
      '-i, --input <path>',
      'a `perf record --kcore` directory (or a perf.data file: then only poked bytes are known)',
    )
    .requiredOption('--addr <addr>', 'start address: hex, or a kallsyms symbol[+0xoff]')
    .option('--len <n>', 'number of bytes', '16')
    .option('--time <t>', 'perf time "seconds.micros" (as perf script prints) or raw ns; default: end of recording')
    .addHelpText(
      'after',
      '\nExample:\n  perfpoke image -i perf.data.dir --addr do_sys_open+0x10 --len 5 --time 1000.000004',
    );
  jsonOption(cmd, 'print JSON Lines: image_insn and image_gap per row, then image_summary');
  textPokeAbiOption(cmd);
  quietOption(cmd).action(
    async (opts: {
      input: string;
      addr: string;
      len: string;
      time?: string;
      json?: boolean;
      textPokeAbi: TextPokeAbi;
      quiet?: boolean;
    }) => {
      const len = Number(opts.len);
      if (!Number.isSafeInteger(len) || len <= 0 || len > MAX_LEN)
        throw new UsageError(`--len must be 1..${MAX_LEN}, got '${opts.len}'`);
      let time = CodeImage.END;
      if (opts.time !== undefined) {
        const t = parsePerfTime(opts.time);
        if (t === undefined)
          throw new UsageError(`--time: expected seconds.micros (1000.000001) or ns, got '${opts.time}'`);
        time = t;
      }
      const m = await loadWithProgress(opts.input, opts);
      const listing = imageListing(m, resolveAddr(m, opts.addr), len, time);
      await withOutput(undefined, (out) => {
        if (opts.json) for (const l of imageJsonLines(listing)) out.write(l);
        else out.write(`${imageTextLines(listing).join('\n')}\n`);
      });
    },
  );
}
