/**
 * `perfpoke check --json`: JSON Lines (src/format/json-lines.ts). One
 * `stale` line per site with stale pokes, one `dropped` line per poke perf
 * would drop (non-kernel cpumode, outside every map, a trampoline removal
 * that does not match), then one `check` summary: verdict, exit code,
 * reasons, notes and figures. Schemas: docs/json/{stale,dropped,check}.schema.json.
 */
import type { CheckPoke } from '../machine/check.js';
import type { CheckOutcome } from '../machine/check-verdict.js';
import type { Machine } from '../machine/from-perf-data.js';
import { jsonHex, jsonLine, jsonTime } from './json-lines.js';

function pokeJson(m: Machine | undefined, p: CheckPoke): Record<string, unknown> {
  return {
    ...jsonTime(p.time),
    cpu: p.cpu,
    addr: jsonHex(p.addr),
    sym: m?.symbolizer.symOff(p.addr, p) ?? '',
    old_len: p.oldLen,
    new_len: p.newLen,
    file_offset: p.fileOffset,
  };
}

export function checkJsonLines(m: Machine | undefined, o: CheckOutcome): string[] {
  const r = o.report;
  const out: string[] = [];
  for (const d of r.disagreements)
    out.push(
      jsonLine({
        type: 'stale',
        site_start: jsonHex(d.siteStart),
        site_end: jsonHex(d.siteEnd),
        sym: m?.symbolizer.symOff(d.siteStart) ?? '',
        stale_pokes: d.stale,
        first: pokeJson(m, d.poke),
        expected: d.expected.replaceAll(' ', ''),
        actual: d.actual.replaceAll(' ', ''),
        missing_after: d.windowAfter === undefined ? null : jsonTime(d.windowAfter),
        missing_before: jsonTime(d.windowBefore),
      }),
    );
  const dropped = (why: string, p: CheckPoke, reason?: string): string =>
    jsonLine({ type: 'dropped', why, ...(reason ? { reason } : {}), poke: pokeJson(m, p) });
  for (const p of r.nonKernel) out.push(dropped('non-kernel-cpumode', p));
  for (const p of r.outsideMaps) out.push(dropped('outside-maps', p));
  for (const b of r.badRemovals) out.push(dropped('bad-removal', b.poke, b.reason));
  out.push(
    jsonLine({
      type: 'check',
      verdict: o.verdict,
      exit_code: o.exitCode,
      reasons: o.reasons.map((x) => ({ code: x.code, why: x.why, hint: x.hint })),
      notes: o.notes,
      pokes: r.pokes,
      sites: r.sites,
      consistent: r.consistent,
      stale: r.stale,
      checked: o.checked,
      uncovered: o.uncovered,
      duplicates: o.duplicates,
      text_poke_events: o.textPokeEvents,
      kcore_dir: m?.kcore ? m.kcore.dir : null,
      warnings: m?.warnings ?? [],
    }),
  );
  return out;
}
