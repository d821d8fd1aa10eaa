/**
 * `check`'s verdict. "0 stale" is only worth something when the recording
 * could have shown a stale poke, so the verdict is
 *
 *  - consistent (exit 0) only with all the evidence: an event with
 *    attr.text_poke, at least one TEXT_POKE checked, a code image
 *    (kcore_dir) holding every poked address, no record lost on the events
 *    that carry the pokes, the data section read to its end — and no
 *    finding (stale poke, poke perf drops);
 *  - inconsistent (exit 1): a finding (checkImage's report);
 *  - inconclusive (exit 4): no finding, but some evidence is missing; each
 *    missing piece is a reason saying why, and what the user can do.
 *
 * Linux 6.1's second copies of a poke (double-delivery.ts) are a note: they
 * are folded before the image is built, so they are neither stale nor lost.
 */
import { checkImage, siteRangeMemo, type CheckReport } from './check.js';
import type { Machine } from './from-perf-data.js';
import type { Loss } from './evidence.js';
import { formatPerfTime } from './time-format.js';
import { FormatError } from '../io/errors.js';

export type Verdict = 'consistent' | 'inconsistent' | 'inconclusive';

/** Exit codes scripts rely on (README "Exit codes": 0 ok, 1 "no", 4 inconclusive). */
export const VERDICT_EXIT: Record<Verdict, number> = { consistent: 0, inconsistent: 1, inconclusive: 4 };

export type ReasonCode =
  | 'no-text-poke-attr'
  | 'no-text-poke-records'
  | 'no-kcore'
  | 'outside-kcore'
  | 'lost-records'
  | 'truncated';

export interface CheckReason {
  code: ReasonCode;
  /** One line: what is missing and why that leaves the answer open. */
  why: string;
  /** What the user can do about it. */
  hint: string;
}

export interface CheckOutcome {
  verdict: Verdict;
  exitCode: number;
  reasons: CheckReason[];
  /** Things worth knowing that do not change the verdict (double delivery). */
  notes: string[];
  report: CheckReport;
  /** Kernel pokes whose old bytes lie in kcore_dir or in a trampoline an earlier poke created. */
  checked: number;
  /** Kernel pokes at addresses the code image does not hold: only checked against earlier pokes, if at all. */
  uncovered: number;
  /** Extra copies folded (Linux 6.1 double delivery): one per poke and extra text_poke event. */
  duplicates: number;
  textPokeEvents: string[];
}

function lossText(l: Loss): string {
  const what =
    l.kind === 'lost'
      ? `${l.count} record(s) lost (PERF_RECORD_LOST)`
      : l.kind === 'lost_samples'
        ? `${l.count} sample(s) lost (PERF_RECORD_LOST_SAMPLES)`
        : `AUX area ${l.kind === 'aux_truncated' ? 'truncated' : 'collision'} (${l.count} bytes)`;
  const from = l.after === undefined ? 'the start of the recording' : formatPerfTime(l.after);
  const to = l.at === undefined ? 'an unknown time' : formatPerfTime(l.at);
  const cpu = l.cpu >= 0 ? ` on cpu ${l.cpu}` : '';
  const ev = l.event?.name ?? '(unknown: no id in sample_id)';
  return `${what} on event ${ev}${cpu}: pokes may be missing between ${from} and ${to}`;
}

/**
 * Kernel pokes with old bytes, split by whether those bytes lie in kcore_dir
 * or inside a trampoline an earlier poke created (checked) or not (uncovered).
 */
function coverage(m: Machine): { checked: number; n: number; first?: bigint } {
  const created: { start: bigint; end: bigint }[] = [];
  let n = 0;
  let checked = 0;
  let first: bigint | undefined;
  const image = m.image;
  const st = image.store;
  // kcore is fixed: one answer per site for its usual (address, length)
  const inBase = siteRangeMemo(image, (a, span) => image.inBase(a) && image.inBase(a + BigInt(span) - 1n));
  // every applied poke is a kernel poke (the image ignores the others)
  for (let q = 0; q < image.order.length; q++) {
    const i = image.order[q]!;
    const ol = st.oldLen[i]!;
    const nl = st.newLen[i]!;
    if (ol === 0) {
      const a = st.addr(i);
      created.push({ start: a, end: a + BigInt(nl) });
      continue;
    }
    if (inBase(q, i, Math.max(ol, nl))) {
      checked++;
      continue;
    }
    const a = st.addr(i);
    const e = a + BigInt(Math.max(ol, nl));
    if (created.length > 0 && created.some((c) => a >= c.start && e <= c.end)) {
      checked++;
      continue;
    }
    n++;
    first ??= a;
  }
  return { checked, n, first };
}

export function judgeMachine(m: Machine): CheckOutcome {
  const report = checkImage(m.image, {
    maps: m.kernelMaps.map((k) => ({ start: k.start, end: k.end })),
    ksymbols: m.ksymbols.filter((k) => !(k.flags & 1)),
  });
  const ev = m.evidence;
  const reasons: CheckReason[] = [];
  const total = m.image.order.length;
  if (ev.textPokeEvents.length === 0)
    reasons.push({
      code: 'no-text-poke-attr',
      why: 'no event in the recording has attr.text_poke set, so the kernel wrote no TEXT_POKE records',
      hint: 'record with `perf record --kcore -e dummy …` (perf adds a text_poke event) or `perfpoke record --kcore`',
    });
  else if (m.image.store.length === 0)
    reasons.push({
      code: 'no-text-poke-records',
      why:
        `event ${ev.textPokeEvents[0]!.name} asked for TEXT_POKE records but the file has none ` +
        '(removed, or the kernel withholds them)',
      hint:
        'record again on a kernel that emits TEXT_POKE (Linux ≥ 5.9) and keep the records ' +
        '(no `inject --strip text_poke`)',
    });
  const cover = coverage(m);
  if (!m.kcore) {
    const agree = report.consistent;
    const compared = total > 0 ? `${agree} of ${total} poke(s) agree with the earlier pokes at their site, but ` : '';
    reasons.push({
      code: 'no-kcore',
      why:
        `no kcore_dir: ${compared}a change lost before the first poke at a site, or a site poked once, ` +
        'cannot be seen without the code at the start',
      hint: 'pass the `perf record --kcore` directory (DIR with DIR/data and DIR/kcore_dir) to -i',
    });
  } else if (cover.n > 0) {
    reasons.push({
      code: 'outside-kcore',
      why:
        `${cover.n} poke(s) at addresses kcore_dir does not hold (first at ${cover.first!.toString(16)}): ` +
        'their first old bytes are checked against nothing',
      hint: "use the recording's own kcore_dir (perf record --kcore copies all kernel text and modules)",
    });
  }
  const seen = new Set<string>();
  for (const l of ev.pokeLosses) {
    const line = lossText(l);
    if (seen.has(line)) continue;
    seen.add(line);
    reasons.push({
      code: 'lost-records',
      why: line,
      hint: 'record again with bigger ring buffers (-m) or fewer events, so nothing is lost on the text_poke event',
    });
  }
  if (ev.truncated)
    reasons.push({
      code: 'truncated',
      why: `the data section could not be read to its end (${ev.truncated.message}): later pokes are not in the check`,
      hint: 'check a complete copy of the recording (perf record must finish: stop it with Ctrl-C, not kill -9)',
    });
  const notes: string[] = [];
  const eventNames = ev.textPokeEvents.map((e) => e.name).join(', ');
  if (m.copies.length > 0) {
    const perPoke = new Map<unknown, number>();
    for (const c of m.copies) perPoke.set(c.of, (perPoke.get(c.of) ?? 1) + 1);
    const most = Math.max(...perPoke.values());
    notes.push(
      `${perPoke.size} poke(s) delivered ${most === 2 ? 'twice' : `up to ${most} times`} ` +
        `(one per text_poke event: ${eventNames}); Linux 6.1 writes each poke once per event, so each is applied once`,
    );
  }
  const verdict: Verdict = !report.ok ? 'inconsistent' : reasons.length > 0 ? 'inconclusive' : 'consistent';
  return {
    verdict,
    exitCode: VERDICT_EXIT[verdict],
    reasons,
    notes,
    report,
    checked: cover.checked,
    uncovered: cover.n,
    duplicates: m.copies.length,
    textPokeEvents: ev.textPokeEvents.map((e) => e.name),
  };
}

/** True for the reader's complaint about a data section that runs past the end of the file (cut short). */
export function isCutShort(e: unknown): e is FormatError {
  return e instanceof FormatError && /perf_file_header\.data\b/.test(e.message) && /within the file/.test(e.message);
}

/** The verdict on a file cut short before its data section ends, when nothing could be read. */
export function cutShortOutcome(message: string): CheckOutcome {
  const report: CheckReport = {
    pokes: 0,
    sites: 0,
    consistent: 0,
    stale: 0,
    disagreements: [],
    nonKernel: [],
    outsideMaps: [],
    badRemovals: [],
    ok: true,
  };
  return {
    verdict: 'inconclusive',
    exitCode: VERDICT_EXIT.inconclusive,
    reasons: [
      {
        code: 'truncated',
        why: `the file is cut short (${message}): nothing was checked`,
        hint: 'check a complete copy of the recording (perf record must finish: stop it with Ctrl-C, not kill -9)',
      },
    ],
    notes: [],
    report,
    checked: 0,
    uncovered: 0,
    duplicates: 0,
    textPokeEvents: [],
  };
}
