import type { Command } from 'commander';
import { Feature } from '../../abi/feature.js';
import { openSession } from '../../session/session.js';
import { collectStats } from '../../session/stats.js';
import { statsJsonLines, statsLines } from '../../format/perf-stats.js';
import { jsonOption, quietOption } from '../options.js';
import { withOutput } from '../output.js';
import { startProgress } from '../progress.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke stats -i F`: what `perf report --stats -i F` prints
 * (src/format/perf-stats.ts).
 */

export { statsLines } from '../../format/perf-stats.js';

export function register(program: Command): void {
  const cmd = program
    .command('stats')
    .description('count records per type and samples per event, as `perf report --stats`')
    .option('-i, --input <path>', `perf.data file (file or pipe mode; - for stdin); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput);
  jsonOption(cmd, 'print the counts as JSON Lines (record_count, event_count, stats_summary)');
  quietOption(cmd).action(async (opts: { input: string; json?: boolean; quiet?: boolean }) => {
    // a damaged feature table does not stop perf's counts: ours are printed, then the damage (exit 2)
    const s = await openSession(opts.input, { damage: 'defer' });
    const progress = startProgress(
      'stats',
      s.file.pipe ? 0 : s.file.header.data.offset + s.file.header.data.size,
      opts,
    );
    try {
      const st = await collectStats(s, (off) => progress.update(off));
      progress.stop();
      await withOutput(undefined, (out) => {
        if (opts.json) for (const l of statsJsonLines(opts.input, st)) out.write(l);
        else out.write(`\n${statsLines(st, s.file.featureSection(Feature.AUXTRACE) !== undefined).join('\n')}\n`);
      });
      if (st.cut) throw s.named(st.cut);
      if (s.file.damage) throw s.file.damage;
    } finally {
      progress.stop();
      await s.close();
    }
  });
}
