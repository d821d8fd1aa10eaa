import type { Command } from 'commander';
import { readFile, stat } from 'node:fs/promises';
import { PerfFile } from '../../perfdata/perf-file.js';
import { ptBufferLines, ptDumpFileLines, type PtDumpFormat } from '../../format/pt-dump.js';
import { UsageError } from '../errors.js';
import { jsonOption, quietOption } from '../options.js';
import { withOutput } from '../output.js';
import { startProgress } from '../progress.js';
import { ptdumpOptions, sliceRange, splitFileRange } from '../ptdump-options.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke pt-dump -i FILE`: the Intel PT packets of every AUXTRACE buffer
 * of a perf.data file (or of a raw PT stream with --raw), as perf 6.1's
 * `perf script -D` prints them (default), as Intel's libipt `ptdump` prints
 * them (--format=ptdump, with ptdump 2.3's options: src/cli/ptdump-options.ts),
 * or as JSON Lines (--json). Text: src/format/pt-dump.ts.
 */
interface Opts {
  input: string;
  raw?: boolean;
  json?: boolean;
  format: string;
  quiet?: boolean;
}

async function readAll(path: string): Promise<Uint8Array> {
  if (path !== '-') return new Uint8Array(await readFile(path));
  const parts: Buffer[] = [];
  for await (const c of process.stdin) parts.push(c as Buffer);
  return new Uint8Array(Buffer.concat(parts));
}

export function register(program: Command): void {
  const cmd = program
    .command('pt-dump')
    .description(
      'print the Intel PT packets of every AUXTRACE buffer, as `perf script -D` (or libipt ptdump) prints them',
    )
    .option(
      '-i, --input <path>',
      "perf.data file ('-' for a pipe on stdin), or a raw PT stream with --raw (FILE:from[-to]: a part of it); " +
        INPUT_DEFAULT_HELP,
    )
    .hook('preAction', fillDefaultInput)
    .option('--raw', 'the input is a raw Intel PT stream, not a perf.data file')
    .option('--format <fmt>', 'text format: perf (perf script -D) or ptdump (Intel libipt ptdump)', 'perf');
  jsonOption(cmd, 'print JSON Lines: auxtrace_info, auxtrace and packet objects');
  quietOption(cmd);
  const ptdump = ptdumpOptions(cmd);
  cmd.action(async (opts: Opts) => {
    if (opts.format !== 'perf' && opts.format !== 'ptdump')
      throw new UsageError(`--format must be perf or ptdump, not ${opts.format}`);
    const format: PtDumpFormat = opts.json ? 'json' : opts.format;
    if (ptdump.errors[0]) throw new UsageError(ptdump.errors[0]);
    if (format !== 'ptdump' && ptdump.given[0])
      throw new UsageError(`${ptdump.given[0]} is a ptdump option: it needs --format=ptdump (and no --json)`);
    // ptdump's --quiet: only its error lines
    const pt = { ...ptdump.opts, quiet: format === 'ptdump' && !!opts.quiet };
    await withOutput(undefined, async (out) => {
      if (opts.raw) {
        // ptdump's FILE[:from[-to]]: dump that part of a raw stream (offsets from its start)
        const range = opts.input === '-' ? { path: '-', from: 0 } : splitFileRange(opts.input);
        const bytes = sliceRange(await readAll(range.path), range);
        for (const l of ptBufferLines(bytes, format, undefined, pt)) out.line(l);
        return;
      }
      const f = await PerfFile.open(opts.input);
      const progress = startProgress('pt-dump', opts.input === '-' ? 0 : (await stat(opts.input)).size, opts);
      try {
        for await (const l of ptDumpFileLines(f, format, (off) => progress.update(off), pt)) {
          out.line(l);
          if (out.pending >= 1 << 16) await out.flush();
        }
      } finally {
        progress.stop();
        await f.close();
      }
    });
  });
}
