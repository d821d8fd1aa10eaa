/**
 * What `collectStats` returns (stats.ts), whichever path counted: the
 * reader path in stats.ts or the header walk in fast-count.ts. Both build the
 * result through `statsResult`, so they agree on its shape.
 */
import type { Session } from './session.js';

export interface EventStats {
  /** attrs[i]'s name. */
  name: string;
  /** PERF_RECORD_SAMPLE records of this event. */
  samples: number;
  /** Sum of LOST_SAMPLES.lost for this event. */
  lostSamples: bigint;
}

export interface SessionStats {
  /** Every record (perf's nr_events[0], "TOTAL"). */
  total: number;
  /** Records per type id (user types ≥ 64 included). */
  byType: Map<number, number>;
  /** Per attr, in file order. */
  events: EventStats[];
  /** Samples whose attr could not be found (perf's nr_unknown_id). */
  unknownId: number;
  /**
   * A pipe that ends inside a record: perf's end of stream, so the counts are
   * those before it and perf prints them; the caller reports this error after.
   */
  cut?: Error;
}

export interface StatsCounts {
  total: number;
  /** Records per type id, indexed by type. */
  counts: number[];
  /** Types beyond `counts`, in the order first seen. */
  other?: Map<number, number>;
  /** Per attr index. */
  samples: (number | undefined)[];
  lost: (bigint | undefined)[];
  unknownId: number;
}

export function statsResult(s: Session, c: StatsCounts): SessionStats {
  const byType = new Map<number, number>();
  c.counts.forEach((n, t) => {
    if (n) byType.set(t, n);
  });
  for (const [t, n] of c.other ?? []) byType.set(t, n);
  const events = s.file.attrs.map((_, i) => ({
    name: s.eventNameAt(i),
    samples: c.samples[i] ?? 0,
    lostSamples: c.lost[i] ?? 0n,
  }));
  return { total: c.total, byType, events, unknownId: c.unknownId };
}
