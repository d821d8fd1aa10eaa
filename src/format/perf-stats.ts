/**
 * What `perf report --stats` prints (perf 6.1: session.c
 * perf_session__fprintf_nr_events, events_stats__fprintf and
 * evlist__fprintf_nr_events, with report.skip-empty's default of true), and
 * its JSON Lines form.
 */
import type { SessionStats } from '../session/stats.js';
import { perfEventName, PERF_RECORD_HEADER_MAX } from './perf-event-text.js';
import { jsonLine } from './json-lines.js';

const pct = (n: number, total: number): string => ((100 * n) / total).toFixed(1).padStart(4);

/** The text lines perf prints (without the leading blank line). */
export function statsLines(st: SessionStats, hasAuxtrace: boolean): string[] {
  const msg = hasAuxtrace ? ' (excludes AUX area (e.g. instruction trace) decoded / synthesized events)' : '';
  const out = [`Aggregated stats:${msg}`];
  const total = st.total;
  out.push(`${'TOTAL'.padStart(16)} events: ${String(total).padStart(10)}`);
  // COMPRESSED2 (83) is past perf 6.1's table; perf 6.16 counts it as the others
  for (let t = 1; t <= PERF_RECORD_HEADER_MAX; t++) {
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

/**
 * JSON Lines: one `record_count` per record type present, one `event_count`
 * per event, then the `stats_summary` (docs/json/*.schema.json).
 */
export function* statsJsonLines(file: string, st: SessionStats): Generator<string> {
  for (const [t, n] of [...st.byType].sort((a, b) => a[0] - b[0]))
    yield jsonLine({ type: 'record_count', record_type: t, name: perfEventName(t), count: n });
  for (const e of st.events)
    yield jsonLine({ type: 'event_count', event: e.name, samples: e.samples, lost_samples: Number(e.lostSamples) });
  yield jsonLine({ type: 'stats_summary', file, total: st.total, unknown_id: st.unknownId });
}
