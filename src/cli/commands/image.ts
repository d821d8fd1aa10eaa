/**
 * perfpoke image -i DIR --addr A --len N [--time T] [--json]
 *
 * The kernel code over [A, A+N) as a CPU saw it at time T (default: end of
 * the recording): kcore_dir bytes with every poke up to T applied, listed as
 * instructions. T is in perf's time syntax (seconds, "5123.006792", as
 * perf script and `perfpoke pokes` print times); --time-ns takes raw ns.
 */
import type { Command } from 'commander';
import { CodeImage } from '../../machine/code-image.js';
import { parseNsTime, parsePerfTime } from '../../machine/time-format.js';
import { imageJsonLines, imageListing, imageTextLines } from '../../format/image-text.js';
import { UsageError } from '../errors.js';
import { jsonOption, quietOption, textPokeAbiOption, type TextPokeAbi } from '../options.js';
import { withOutput } from '../output.js';
import { loadWithProgress, resolveAddr } from '../machine-input.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

const MAX_LEN = 1 << 20;

export function register(program: Command): void {
  const cmd = program
    .command('image')
    .description('bytes and disassembly of kernel code at an address, at a point in time (kcore_dir + pokes)')
    .option(
      '-i, --input <path>',
      `a \`perf record --kcore\` directory (or perf.data: then only poked bytes are known); ${INPUT_DEFAULT_HELP}`,
    )
    .hook('preAction', fillDefaultInput)
    .requiredOption('--addr <addr>', 'start address: hex, or a kallsyms symbol[+0xoff]')
    .option('--len <n>', 'number of bytes', '16')
    .option('--time <secs>', 'perf time: seconds as perf prints them ("5123.006792"); default: end of recording')
    .option('--time-ns <ns>', 'the same time as raw nanoseconds of the perf clock (5123006792000)')
    .addHelpText(
      'after',
      '\nExamples:\n  perfpoke image -i perf.data.dir --addr do_sys_open+0x10 --len 5 --time 1000.000004\n' +
        '  perfpoke image -i perf.data.dir --addr ffffffff81000104 --len 5 --time-ns 1000000004000',
    );
  jsonOption(cmd, 'print JSON Lines: image_insn and image_gap per row, then image_summary');
  textPokeAbiOption(cmd);
  quietOption(cmd).action(
    async (opts: {
      input: string;
      addr: string;
      len: string;
      time?: string;
      timeNs?: string;
      json?: boolean;
      textPokeAbi: TextPokeAbi;
      quiet?: boolean;
    }) => {
      const len = Number(opts.len);
      if (!Number.isSafeInteger(len) || len <= 0 || len > MAX_LEN)
        throw new UsageError(`--len must be 1..${MAX_LEN}, got '${opts.len}'`);
      let time = CodeImage.END;
      if (opts.time !== undefined && opts.timeNs !== undefined)
        throw new UsageError('give --time or --time-ns, not both');
      if (opts.time !== undefined) {
        const t = parsePerfTime(opts.time);
        if (t === undefined)
          throw new UsageError(`--time: expected seconds as perf prints them (5123.006792), got '${opts.time}'`);
        time = t;
      }
      if (opts.timeNs !== undefined) {
        const t = parseNsTime(opts.timeNs);
        if (t === undefined)
          throw new UsageError(`--time-ns: expected nanoseconds (5123006792000), got '${opts.timeNs}'`);
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
