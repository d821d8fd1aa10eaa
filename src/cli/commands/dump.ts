import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { dumpFile, type DumpOptions } from '../../format/perf-dump.js';
import { jsonOption, quietOption, textPokeAbiOption, type TextPokeAbi } from '../options.js';
import { OutputSink } from '../output.js';
import { startProgress } from '../progress.js';
import { stat } from 'node:fs/promises';
import { loadKcoreDir, resolveInput } from '../../machine/kcore-dir.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke dump -i F`: every record as `perf script -D` prints it, in perf's
 * delivery order (user records at once, kernel records sorted by time and
 * flushed per FINISHED_ROUND), or file order with --order=file. The text is
 * src/format/perf-dump.ts's.
 */

interface DumpCliOptions {
  input: string;
  hex?: boolean;
  json?: boolean;
  textPokeAbi: TextPokeAbi;
  order: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('dump')
    .description('print every record of a perf.data file, one summary line each, as `perf script -D` does')
    .option(
      '-i, --input <path>',
      `perf.data file (file or pipe mode); '-' reads a pipe from stdin; ${INPUT_DEFAULT_HELP}`,
    )
    .hook('preAction', fillDefaultInput)
    .option('--hex', "also print perf's hex dump of every record (the full `perf script -D` layout)")
    .option('--order <order>', "'perf' (perf's delivery order: sorted by time per round) or 'file'", 'perf');
  jsonOption(cmd, 'print one JSON object per record (type "record"; u64 as "0x…" strings, bytes as hex)');
  textPokeAbiOption(cmd);
  quietOption(cmd).action(async (opts: DumpCliOptions) => {
    if (opts.order !== 'perf' && opts.order !== 'file')
      throw new UsageError(`--order: expected perf or file, got ${opts.order}`);
    // -i DIR: DIR/data, named as perf names it, and DIR/kcore_dir for TEXT_POKE symbols
    const { dataFile, kcoreDir } =
      opts.input === '-' ? { dataFile: '-', kcoreDir: undefined } : resolveInput(opts.input);
    const size = dataFile === '-' ? 0 : (await stat(dataFile)).size;
    const kcore = kcoreDir ? loadKcoreDir(kcoreDir) : undefined;
    const progress = startProgress('dump', size, opts);
    // synchronous writes hand the buffer to the kernel as it is: the async path copies every 64 KiB chunk
    const out = new OutputSink(undefined, { sync: true });
    const o: DumpOptions = { ...opts, order: opts.order, label: dataFile, kcore };
    try {
      await dumpFile(dataFile, o, out, (raw) => progress.update(raw.fileOffset));
    } finally {
      progress.stop();
      await out.close();
    }
  });
}
