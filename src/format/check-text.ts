/**
 * `perfpoke check`'s text: the figures line, the findings (each stale site
 * with its window), the reasons an answer is open (one line each: why, then
 * what to do), notes, and the verdict word last.
 */
import type { CheckPoke } from '../machine/check.js';
import type { CheckOutcome } from '../machine/check-verdict.js';
import type { Machine } from '../machine/from-perf-data.js';
import { formatPerfTime } from '../machine/time-format.js';

function pokeText(m: Machine | undefined, p: CheckPoke): string {
  const sym = m?.symbolizer.symOff(p.addr, p) ?? '';
  const where = `${p.addr.toString(16)}${sym ? ` ${sym}` : ''}`;
  const at = `(file offset 0x${p.fileOffset.toString(16)})`;
  return `${formatPerfTime(p.time)} cpu ${p.cpu} ${where} len ${p.oldLen}/${p.newLen} ${at}`;
}

const from = (t: bigint | undefined): string => (t === undefined ? 'the start of the recording' : formatPerfTime(t));

export function checkText(m: Machine | undefined, o: CheckOutcome): string[] {
  const r = o.report;
  const out: string[] = [];
  out.push(
    `pokes ${r.pokes}, sites ${r.sites}: ${r.consistent} consistent, ${r.stale} stale` +
      (o.duplicates > 0 ? ` (${o.duplicates} second copies folded)` : ''),
  );
  for (const w of m?.warnings ?? []) out.push(`warning: ${w}`);
  for (const d of r.disagreements) {
    const sym = m?.symbolizer.symOff(d.siteStart) ?? '';
    out.push(
      `site ${d.siteStart.toString(16)}-${d.siteEnd.toString(16)}${sym ? ` ${sym}` : ''}: ` +
        `${d.stale} stale poke(s), first at ${pokeText(m, d.poke)}`,
    );
    out.push(`  image holds: ${d.expected}`);
    out.push(`  poke's old:  ${d.actual}`);
    out.push(`  a change is missing between ${from(d.windowAfter)} and ${formatPerfTime(d.windowBefore)}`);
  }
  for (const p of r.nonKernel) out.push(`non-kernel cpumode (perf ignores it): ${pokeText(m, p)}`);
  for (const p of r.outsideMaps) out.push(`outside every known map (perf drops it): ${pokeText(m, p)}`);
  for (const b of r.badRemovals)
    out.push(`trampoline removal does not match its creation (${b.reason}): ${pokeText(m, b.poke)}`);
  for (const x of o.reasons) out.push(`inconclusive: ${x.why}; ${x.hint}`);
  for (const n of o.notes) out.push(`note: ${n}`);
  out.push(o.verdict);
  return out;
}
