/**
 * pokes.verdict from `check`'s report (recordings.verdict is check's own
 * three-way verdict, taken from judgeMachine in poke-rows.ts).
 *
 * Per poke, today:
 *   consistent    its old bytes match the image just before it
 *   stale         they do not (a change at its site is missing before it)
 *   non-kernel    cpumode is not kernel: perf ignores it
 *   outside-maps  no known map covers it: perf drops it
 *   bad-removal   a trampoline removal that matches no creation
 * A poke with several findings gets the first in this order:
 * non-kernel, bad-removal, outside-maps, stale.
 */
import type { CheckPoke, CheckReport } from '../machine/check.js';
import type { PlacedPoke } from '../machine/code-image.js';
import type { Poke } from '../machine/poke.js';

export type PokeVerdict = 'consistent' | 'stale' | 'non-kernel' | 'outside-maps' | 'bad-removal';

const key = (p: { time: bigint; addr: bigint; fileOffset: number }): string => `${p.fileOffset}:${p.time}:${p.addr}`;

export interface VerdictOf {
  poke(p: Poke, placed: PlacedPoke | undefined): PokeVerdict;
}

export function verdictsFrom(report: CheckReport): VerdictOf {
  const found = new Map<string, PokeVerdict>();
  const mark = (list: CheckPoke[], v: PokeVerdict): void => {
    for (const p of list) if (!found.has(key(p))) found.set(key(p), v);
  };
  mark(report.nonKernel, 'non-kernel');
  mark(
    report.badRemovals.map((b) => b.poke),
    'bad-removal',
  );
  mark(report.outsideMaps, 'outside-maps');
  return {
    poke(p, placed) {
      return found.get(key(p)) ?? (placed && !placed.consistent ? 'stale' : 'consistent');
    },
  };
}
