import type { Command } from 'commander';
import { perfDataToJsonl, jsonlToPerfData } from '../../perfdata/jsonl.js';
import { UsageError } from '../errors.js';
import { quietOption, textPokeAbiOption, type TextPokeAbi } from '../options.js';
import { startProgress } from '../progress.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

export function register(program: Command): void {
  const cmd = program
    .command('convert')
    .description('convert perf.data to JSON lines (--to jsonl) or JSON lines back to perf.data')
    .option('-i, --input <path>', `perf.data file, or a .jsonl file to turn into perf.data; ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option(
      '--to <format>',
      "'jsonl' (from perf.data) or 'perf.data' (from JSON lines); guessed from the input by default",
    )
    .option('-o, --output <file>', "output file ('-' or none: stdout for jsonl; '-' is pipe-mode perf.data)")
    .option('--big-endian', 'write a big-endian perf.data');
  textPokeAbiOption(cmd);
  type Opts = { input: string; to?: string; output?: string; bigEndian?: boolean; textPokeAbi: TextPokeAbi };
  quietOption(cmd).action(async (opts: Opts & { quiet?: boolean }) => {
    const to = opts.to ?? (/\.jsonl?$/.test(opts.input) ? 'perf.data' : 'jsonl');
    if (to === 'jsonl') {
      // on stdout the JSON lines are the output: no bar beside them
      const progress = startProgress('convert', 0, { quiet: opts.quiet || !opts.output || opts.output === '-' });
      try {
        await perfDataToJsonl(opts.input, opts.output ?? '-', {
          textPokeAbi: opts.textPokeAbi,
          progress: progress.update,
        });
      } finally {
        progress.stop();
      }
    } else if (to === 'perf.data' || to === 'data') {
      if (!opts.output) throw new UsageError('convert to perf.data needs -o OUT');
      try {
        await jsonlToPerfData(opts.input, opts.output, { bigEndian: opts.bigEndian });
      } catch (e) {
        // malformed JSON lines are bad input (exit 2, one line), not an internal error
        if (e instanceof Error && !(e as NodeJS.ErrnoException).code && e.name === 'Error')
          throw new UsageError(e.message);
        throw e;
      }
    } else throw new UsageError(`--to: 'jsonl' or 'perf.data', not '${opts.to}'`);
  });
}
