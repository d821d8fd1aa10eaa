import type { Command } from 'commander';
import { Feature } from '../../abi/feature.js';
import { openSession } from '../../session/session.js';
import { collectStats, type SessionStats } from '../../session/stats.js';
import { perfEventName, PERF_RECORD_HEADER_MAX } from '../../session/event-text.js';
import { stat } from 'node:fs/promises';
import type { Session } from '../../session/session.js';

/**
 * `perfpoke stats -i F`: what `perf report --stats -i F` prints (perf 6.1:
 * session.c perf_session__fprintf_nr_events, events_stats__fprintf and
 * evlist__fprintf_nr_events, with report.skip-empty's default of true).
 */

const pct = (n: number, total: number): string => ((100 * n) / total).toFixed(1).padStart(4);

/** The text lines perf prints (without the leading blank line). */
export function statsLines(st: SessionStats, hasAuxtrace: boolean): string[] {
  const msg = hasAuxtrace ? ' (excludes AUX area (e.g. instruction trace) decoded / synthesized events)' : '';
  const out = [`Aggregated stats:${msg}`];
  const total = st.total;
  out.push(`${'TOTAL'.padStart(16)} events: ${String(total).padStart(10)}`);
  for (let t = 1; t < PERF_RECORD_HEADER_MAX; t++) {
    const n = st.byType.get(t) ?? 0;
    const name = perfEventName(t);
    if (!n || name === 'UNKNOWN') continue;
    out.push(`${name.padStart(16)} events: ${String(n).padStart(10)}  (${pct(n, total)}%)`);
  }
  for (const e of st.events) {
    if (!e.samples && !e.lostSamples) continue;
    out.push(`${e.name} stats:`);
    if (e.samples) out.push(`${'SAMPLE'.padStart(16)} events: ${String(e.samples).padStart(10)}`);
    // perf keeps these in a u32 and prints with %10d
    if (e.lostSamples)
      out.push(`${'LOST_SAMPLES'.padStart(16)} events: ${String(BigInt.asIntN(32, e.lostSamples)).padStart(10)}`);
  }
  return out;
}

export function statsJson(file: string, st: SessionStats): object {
  const byType: Record<string, number> = {};
  for (const [t, n] of [...st.byType].sort((a, b) => a[0] - b[0]))
    byType[perfEventName(t) === 'UNKNOWN' ? `UNKNOWN(${t})` : perfEventName(t)] = n;
  return {
    file,
    total: st.total,
    byType,
    events: st.events.map((e) => ({ name: e.name, samples: e.samples, lostSamples: e.lostSamples.toString() })),
    unknownId: st.unknownId,
  };
}

export function register(program: Command): void {
  program
    .command('stats')
    .description('count records per type and samples per event, as `perf report --stats`')
    .requiredOption('-i, --input <file>', 'perf.data file (file or pipe mode; - for stdin)')
    .option('--json', 'print the counts as JSON')
    .action(async (opts: { input: string; json?: boolean }) => {
      const s = await openSession(opts.input);
      try {
        const st = await withProgress(s, (tick) => collectStats(s, tick));
        if (opts.json) {
          process.stdout.write(JSON.stringify(statsJson(opts.input, st), null, 2) + '\n');
          return;
        }
        const hasAux = s.file.featureSection(Feature.AUXTRACE) !== undefined;
        process.stdout.write('\n' + statsLines(st, hasAux).join('\n') + '\n');
      } finally {
        await s.close();
      }
    });
}

/** Run `work` with a cli-progress bar on stderr when it is a terminal (shared with script). */
export async function withProgress<T>(s: Session, work: (tick: (offset: number) => void) => Promise<T>): Promise<T> {
  if (!process.stderr.isTTY || s.file.pipe) return work(() => {});
  const total = (await stat(s.file.path)).size;
  const cliProgress = (await import('cli-progress')).default; // only for a terminal
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'reading [{bar}] {percentage}%', clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  try {
    return await work((off) => bar.update(off));
  } finally {
    bar.stop();
  }
}
