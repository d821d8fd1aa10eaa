import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { perfDataToJsonl, jsonlToPerfData } from '../../perfdata/jsonl.js';
import { UsageError } from '../errors.js';

/** A progress bar on stderr, only when stderr is a terminal. */
export function makeProgress(
  label: string,
): { update: (at: number, total: number) => void; stop: () => void } | undefined {
  if (!process.stderr.isTTY) return undefined;
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}%`, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: (at, total) => {
      if (!total) return;
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(Math.min(at, total));
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}

export function register(program: Command): void {
  program
    .command('convert')
    .description('convert perf.data to JSON lines (--to jsonl) or JSON lines back to perf.data')
    .requiredOption('-i, --input <file>', 'perf.data file, or a .jsonl file to turn into perf.data')
    .option(
      '--to <format>',
      "'jsonl' (from perf.data) or 'perf.data' (from JSON lines); guessed from the input by default",
    )
    .option('-o, --output <file>', "output file ('-' or none: stdout for jsonl; '-' is pipe-mode perf.data)")
    .option('--big-endian', 'write a big-endian perf.data')
    .option('--text-poke-abi <abi>', "how to read type 19 in perf.data: 'final' (CGROUP, default) or 'rfc'", 'final')
    .action(async (opts: { input: string; to?: string; output?: string; bigEndian?: boolean; textPokeAbi: string }) => {
      const to = opts.to ?? (/\.jsonl?$/.test(opts.input) ? 'perf.data' : 'jsonl');
      if (opts.textPokeAbi !== 'rfc' && opts.textPokeAbi !== 'final')
        throw new UsageError(`--text-poke-abi: 'rfc' or 'final', not '${opts.textPokeAbi}'`);
      if (to === 'jsonl') {
        const progress = opts.output && opts.output !== '-' ? makeProgress('convert') : undefined;
        try {
          await perfDataToJsonl(opts.input, opts.output ?? '-', {
            textPokeAbi: opts.textPokeAbi as 'final' | 'rfc',
            progress: progress?.update,
          });
        } finally {
          progress?.stop();
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
