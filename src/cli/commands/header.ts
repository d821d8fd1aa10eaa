import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { readFileFeatures } from '../../perfdata/features/index.js';
import { perfDataPath } from '../../perfdata/input-path.js';
import { headerJsonLines, headerLines } from '../../format/perf-header.js';
import { readHostEnv } from '../../format/header-unread.js';
import { jsonOption } from '../options.js';
import { withOutput } from '../output.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke header -i F`: what `perf report --header-only -i F` prints, from
 * our own decoding of the header and feature sections (src/format/perf-header.ts).
 * `-I` adds the "full only" features like perf's -I. On a damaged file it
 * prints what perf prints (the sections before the damage, the rest from
 * perf's empty env), then fails with the damage's one-line error.
 */

export { ctimeString, headerLines } from '../../format/perf-header.js';

export function register(program: Command): void {
  const cmd = program
    .command('header')
    .description('print the file header and feature sections, as `perf report --header-only`')
    .option('-i, --input <path>', `perf.data file (file or pipe mode); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option('-I, --full', 'also print the long features (topologies, caches), like perf -I');
  jsonOption(cmd, 'print the header and each decoded feature as JSON Lines (file_header, feature)');
  cmd.action(async (opts: { input: string; full?: boolean; json?: boolean }) => {
    // a damaged file: what perf prints before the damage, then the error (exit 2)
    const ff = await readFileFeatures(opts.input, { partial: true });
    // perf prints the data file's mtime ("captured on"); a pipe has none but now
    const mtime = opts.json
      ? undefined
      : opts.input === '-'
        ? new Date()
        : (await stat(perfDataPath(opts.input))).mtime;
    await withOutput(undefined, (out) => {
      if (mtime === undefined) for (const l of headerJsonLines(opts.input, ff)) out.write(l);
      else {
        const host = ff.unread?.length ? readHostEnv() : {};
        out.write(`${headerLines(ff, mtime, !!opts.full, host).join('\n')}\n`);
      }
    });
    if (ff.damage) throw ff.damage;
  });
}
