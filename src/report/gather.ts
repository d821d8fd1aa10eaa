/**
 * What `perfpoke report` shows, gathered from one recording: the tables
 * `perfpoke export` makes (src/export/collect.ts: header, records, samples,
 * pokes with kind/instructions/verdict, sites with their stale windows, PT
 * errors) plus `check`'s verdict with its reasons (src/machine/check-verdict.ts)
 * and, for intel_pt recordings, the decode errors once more without pokes.
 *
 * Everything here is plain JSON data (numbers, strings): times are ns since
 * the report's time origin `t0` (the earliest record or poke), so the page
 * needs no BigInt. Strings from the recording stay strings: the page renders
 * them with textContent only (page.ts, client.ts).
 */
import { RecordType } from '../abi/record-type.js';
import { loadPtRecording } from '../intelpt/flow/recording.js';
import { formatPerfTime } from '../machine/time-format.js';
import { collectRecording, type CollectOptions } from '../export/collect.js';
import { ptRows } from '../export/pt-rows.js';
import type { Row } from '../export/schema.js';

export interface ReportPoke {
  /** ns since t0; null when the record has no time. */
  t: number | null;
  time: string;
  cpu: number;
  addr: string;
  sym: string;
  kind: string;
  verdict: string;
  old: string;
  new: string;
  before: string;
  after: string;
  /** Index into sites; -1: a poke perf ignores (no site). */
  site: number;
  /** Linux 6.1 extra copies folded into this poke (one per extra text_poke event). */
  copies: number;
}

export interface ReportSite {
  start: string;
  sym: string;
  kinds: string[];
  stale: number;
  /** Stale site: a change is missing after this (null: the recording's start) … */
  lostAfter: number | null;
  /** … and before this (ns since t0). */
  lostBefore: number | null;
  lostText: string;
}

export interface ReportError {
  cpu: number;
  t: number | null;
  ip: string;
  message: string;
  reason: string;
}

export interface ReportData {
  name: string;
  header: { label: string; value: string }[];
  /** Time origin as perf prints it, and the span shown (ns). */
  t0: string;
  span: number;
  counts: { type: string; count: number }[];
  check: {
    verdict: string;
    reasons: { code: string; why: string; hint: string }[];
    notes: string[];
    summary: string;
  };
  sites: ReportSite[];
  pokes: ReportPoke[];
  /**
   * intel_pt recordings only: errors per CPU decoded with and without the pokes (exact counts),
   * and up to MAX_ERRORS errors of each decode, spread over each CPU's (the marks; a broken trace
   * can have millions).
   */
  pt: {
    cpus: { cpu: number; withPokes: number; withoutPokes: number }[];
    withPokes: ReportError[];
    withoutPokes: ReportError[];
  } | null;
  /** Samples per time bin and event (empty when the recording has none). */
  samples: { total: number; binNs: number; events: { name: string; bins: number[] }[] };
  /** Samples per comm and per dso (text from the recording). */
  comms: { name: string; count: number }[];
  dsos: { name: string; count: number }[];
}

const BINS = 120;
/** Errors kept per decode for the page's marks and table (counts stay exact). */
export const MAX_ERRORS = 2000;
const hex = (v: unknown): string => (typeof v === 'bigint' ? `0x${v.toString(16)}` : '');
const big = (v: unknown): bigint | null => (typeof v === 'bigint' ? v : null);
const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

function topCounts(rows: Row[], col: string, n: number): { name: string; count: number }[] {
  const m = new Map<string, number>();
  for (const r of rows) {
    const k = str(r[col]) || '[unknown]';
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m]
    .map(([name, count]) => ({ name, count }))
    .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1))
    .slice(0, n);
}

/**
 * At most `max` errors, evenly spaced through each CPU's list (each CPU gets its share), so the marks
 * show where a broken trace fails over the whole recording, not only its first moments.
 */
function spread(errors: Row[], max: number): Row[] {
  if (errors.length <= max) return errors;
  const byCpu = new Map<unknown, Row[]>();
  for (const e of errors) {
    const list = byCpu.get(e.cpu);
    if (list) list.push(e);
    else byCpu.set(e.cpu, [e]);
  }
  const share = Math.max(1, Math.floor(max / byCpu.size));
  const out: Row[] = [];
  for (const list of byCpu.values()) {
    const step = Math.max(1, list.length / share);
    for (let i = 0; i < list.length && out.length < max; i += step) {
      const e = list[Math.floor(i)];
      if (e) out.push(e);
    }
  }
  return out;
}

function headerOf(rec: Row, input: string, span: bigint | null): { label: string; value: string }[] {
  const events = Array.isArray(rec.events) ? rec.events.map(String).join(', ') : '';
  const rows: [string, unknown][] = [
    ['input', input],
    ['host', rec.host],
    ['kernel', rec.kernel],
    ['perf version', rec.perf_version],
    ['arch', rec.arch],
    ['CPUs online', rec.nr_cpus],
    ['events', events],
    ['duration', span === null ? null : `${(Number(span) / 1e9).toFixed(6)} s`],
    ['first record', rec.first_time_ns === null ? null : formatPerfTime(rec.first_time_ns as bigint)],
    ['last record', rec.last_time_ns === null ? null : formatPerfTime(rec.last_time_ns as bigint)],
    ['kcore_dir', rec.kcore_dir ? 'yes (pokes checked against real kernel text)' : 'no'],
    ['intel_pt', rec.intel_pt ? 'yes' : 'no'],
    ['cmdline', rec.cmdline],
  ];
  return rows.map(([label, v]) => ({ label, value: v === null || v === undefined || v === '' ? '(absent)' : str(v) }));
}

export async function gatherReport(input: string, opts: CollectOptions = {}): Promise<ReportData> {
  const { tables, machine, outcome } = await collectRecording(input, opts);
  const rows = tables.rows;
  const rec = rows.recordings[0] ?? {};
  // the time axis: every timed record and poke (a poke perf reads at time 0 stays on it)
  const times = [big(rec.first_time_ns), big(rec.last_time_ns), ...rows.pokes.map((p) => big(p.time_ns))];
  const known = times.filter((t): t is bigint => t !== null);
  let lo = known[0] ?? 0n;
  let hi = lo;
  for (const t of known) {
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  const rel = (v: unknown): number | null => (typeof v === 'bigint' ? Number(v - lo) : null);

  const siteIndex = new Map<bigint, number>();
  const sites: ReportSite[] = rows.sites.map((s, i) => {
    siteIndex.set(s.site_start as bigint, i);
    const after = big(s.lost_after_ns);
    const before = big(s.lost_before_ns);
    const stale = Number(s.stale);
    return {
      start: hex(s.site_start),
      sym: str(s.sym),
      kinds: Array.isArray(s.kinds) ? s.kinds.map(String) : [],
      stale,
      lostAfter: stale > 0 ? (after === null ? 0 : rel(after)) : null,
      lostBefore: stale > 0 ? rel(before) : null,
      lostText:
        stale > 0
          ? `a change is missing between ${after === null ? 'the start of the recording' : formatPerfTime(after)}` +
            ` and ${before === null ? 'the end' : formatPerfTime(before)}`
          : '',
    };
  });
  const copies = new Map<number, number>();
  for (const c of machine.copies) copies.set(c.of.fileOffset, (copies.get(c.of.fileOffset) ?? 0) + 1);
  const pokes: ReportPoke[] = rows.pokes.map((p) => ({
    t: rel(p.time_ns),
    time: p.time_ns === null ? '' : formatPerfTime(p.time_ns as bigint),
    cpu: Number(p.cpu),
    addr: hex(p.addr),
    sym: str(p.ksym) ? `${str(p.sym)} (${str(p.ksym)})` : str(p.sym),
    kind: str(p.kind),
    verdict: str(p.verdict),
    old: str(p.old),
    new: str(p.new),
    before: str(p.before),
    after: str(p.after),
    site: p.site_start === null ? -1 : (siteIndex.get(p.site_start as bigint) ?? -1),
    copies: copies.get(Number(p.offset)) ?? 0,
  }));

  const errRow = (e: Row): ReportError => ({
    cpu: Number(e.cpu),
    t: rel(e.time_ns),
    ip: hex(e.ip),
    message: str(e.message),
    reason: str(e.reason),
  });
  let pt: ReportData['pt'] = null;
  if (rec.intel_pt) {
    // the same traces decoded over the image before any poke: what the pokes explain
    const again = await loadPtRecording(input);
    const without = ptRows({ ...again, pokes: [] }, false).errors;
    const n = (list: Row[], cpu: number): number => list.filter((e) => e.cpu === cpu).length;
    pt = {
      cpus: again.cpus
        .map((c) => c.cpu)
        .sort((a, b) => a - b)
        .map((cpu) => ({ cpu, withPokes: n(rows.errors, cpu), withoutPokes: n(without, cpu) })),
      withPokes: spread(rows.errors, MAX_ERRORS).map(errRow),
      withoutPokes: spread(without, MAX_ERRORS).map(errRow),
    };
  }

  const span = Number(hi - lo);
  const binNs = Math.max(1, Math.ceil((span + 1) / BINS));
  const byEvent = new Map<string, number[]>();
  for (const s of rows.samples) {
    const t = rel(s.time_ns);
    if (t === null) continue;
    const ev = str(s.event);
    const bins = byEvent.get(ev) ?? new Array<number>(BINS).fill(0);
    byEvent.set(ev, bins);
    const k = Math.min(BINS - 1, Math.floor(t / binNs));
    bins[k] = (bins[k] ?? 0) + 1;
  }
  const counts = new Map<string, number>();
  for (const r of rows.records) {
    const k = r.record_type === RecordType.SAMPLE ? 'SAMPLE' : str(r.type_name);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const r = outcome.report;
  return {
    name: tables.name,
    header: headerOf(rec, input, rec.first_time_ns === null ? null : hi - lo),
    t0: formatPerfTime(lo),
    span,
    counts: [...counts].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count),
    check: {
      verdict: outcome.verdict,
      reasons: outcome.reasons.map((x) => ({ code: x.code, why: x.why, hint: x.hint })),
      notes: outcome.notes,
      summary:
        `${machine.image.pokes.length} pokes at ${machine.image.sites.length} sites: ` +
        `${r.disagreements.reduce((a, d) => a + d.stale, 0)} stale, ${outcome.checked} checked against kcore_dir, ` +
        `${outcome.uncovered} outside it, ${outcome.duplicates} second copies folded`,
    },
    sites,
    pokes,
    pt,
    samples: { total: rows.samples.length, binNs, events: [...byEvent].map(([name, bins]) => ({ name, bins })) },
    comms: topCounts(rows.samples, 'comm', 20),
    dsos: topCounts(rows.samples, 'dso', 20),
  };
}
