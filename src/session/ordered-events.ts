/**
 * Time-ordered delivery of records, after perf's tools/perf/util/ordered-events.c
 * and the flushing rule explained in session.c (process_finished_round).
 *
 * The kernel writes one ring buffer per CPU; `perf record` drains them in turn
 * and writes a PERF_RECORD_FINISHED_ROUND after each pass. Inside one buffer
 * records are in time order, across buffers they are not:
 *
 *    ============ PASS n =================
 *       CPU 0         |   CPU 1
 *    cnt1 timestamps  |   cnt2 timestamps
 *          1          |         2
 *          2          |         3
 *          -          |         4  <--- max recorded
 *
 *    ============ PASS n + 1 ==============
 *          3          |         5
 *          4          |         6
 *          5          |         7 <---- max recorded
 *
 *      Flush every event below timestamp 4
 *
 *    ============ PASS n + 2 ==============
 *          6          |         8
 *          7          |         9
 *          -          |         10
 *
 *      Flush every event below timestamp 7
 *
 * An event read in pass n+1 may be older than the newest event of pass n (3 < 4
 * above), but nothing read in pass n+2 can be older than everything of pass n:
 * each CPU's buffer was drained past that point. So at the end of a round perf
 * delivers everything up to the maximum time seen at the end of the *previous*
 * round, and remembers the current maximum for the next round.
 *
 * Records without a time (perf's user records ≥ 64, and kernel records when
 * sample_id_all is off) are not queued: perf delivers them at once, at their
 * place in the file, ahead of older queued records. The caller does the same:
 * this class only ever sees timed records.
 *
 * Memory stays bounded as in perf: when the queued bytes pass `maxQueueBytes`
 * the queue does a HALF flush (everything up to the midpoint between the
 * oldest queued time and the time of the last queued record).
 */

/** perf's enum oe_flush: why a flush happened. */
export type FlushKind = 'round' | 'half' | 'final';

export interface OrderedEventsOptions {
  /** Queue budget in bytes (records + per-entry overhead); HALF flush above it. Default 64 MiB. */
  maxQueueBytes?: number;
}

export const DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024;

/** Bookkeeping cost of one queued entry, on top of its record bytes (perf: sizeof(struct ordered_event)). */
const ENTRY_OVERHEAD = 64;

interface Entry<T> {
  time: bigint;
  seq: number;
  /** Kept so a late error (at delivery) can still name the record's place in the file. */
  fileOffset: number;
  size: number;
  item: T;
}

function byTimeThenFileOrder<T>(a: Entry<T>, b: Entry<T>): number {
  return a.time < b.time ? -1 : a.time > b.time ? 1 : a.seq - b.seq;
}

/** What happened so far, for diagnostics and tests. */
export interface OrderedEventsStats {
  queued: number;
  delivered: number;
  /** Records queued with a time older than the last delivered one (perf's nr_unordered_events). */
  unordered: number;
  flushes: Record<FlushKind, number>;
  /** Largest queue size seen, bytes. */
  peakBytes: number;
}

/**
 * The queue. Call `queue()` for each timed record in file order, `finishedRound()`
 * on FINISHED_ROUND, `finish()` at end of input; after each
 * call take the records now in order from `ready` (and clear it).
 */
export class OrderedEvents<T> {
  /** Records released by the last calls, in delivery order. The caller empties it. */
  ready: T[] = [];

  private pending: Entry<T>[] = [];
  private sorted = true;
  private seq = 0;
  private bytes = 0;
  private readonly maxBytes: number;
  /** perf's oe->max_timestamp: the newest time queued so far. */
  private maxTime = -1n;
  /** perf's oe->next_flush: the limit the next ROUND flush may deliver up to (-1: nothing). */
  private nextFlush = -1n;
  /** perf's oe->last_flush: time of the last delivered record. */
  private lastFlush = -1n;
  /** Time of the most recently queued record (perf's oe->last), for HALF. */
  private lastQueuedTime = -1n;
  readonly stats: OrderedEventsStats = {
    queued: 0,
    delivered: 0,
    unordered: 0,
    flushes: { round: 0, half: 0, final: 0 },
    peakBytes: 0,
  };

  constructor(opts: OrderedEventsOptions = {}) {
    this.maxBytes = opts.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES;
  }

  /** Number of records waiting. */
  get length(): number {
    return this.pending.length;
  }
  get queuedBytes(): number {
    return this.bytes;
  }

  /**
   * Queue one timed record. `size` is what it costs to keep (its byte length);
   * `item` must outlive the caller's read window (a copy).
   */
  queue(time: bigint, fileOffset: number, size: number, item: T): void {
    if (time < this.lastFlush) this.stats.unordered++;
    const p = this.pending;
    if (p.length > 0 && time < p[p.length - 1]!.time) this.sorted = false;
    p.push({ time, seq: this.seq++, fileOffset, size, item });
    this.stats.queued++;
    if (time > this.maxTime) this.maxTime = time;
    this.lastQueuedTime = time;
    this.bytes += size + ENTRY_OVERHEAD;
    if (this.bytes > this.stats.peakBytes) this.stats.peakBytes = this.bytes;
    if (this.bytes > this.maxBytes) this.flush('half');
  }

  /** FINISHED_ROUND: deliver up to the previous round's maximum, remember this round's. */
  finishedRound(): void {
    this.flush('round');
  }

  /** End of input: deliver everything. */
  finish(): void {
    this.flush('final');
  }

  private flush(kind: FlushKind): void {
    // perf returns early on an empty queue, so an empty round does not move next_flush
    if (this.pending.length === 0) return;
    this.stats.flushes[kind]++;
    let limit: bigint;
    if (kind === 'final') {
      limit = BigInt.asUintN(64, -1n);
    } else if (kind === 'half') {
      this.sort();
      const first = this.pending[0];
      if (!first) return;
      // perf: next_flush = first->timestamp + (last->timestamp - first->timestamp) / 2,
      // where `last` is the record queued last (not necessarily the newest).
      // biome-ignore lint/complexity/useMathMinMax: bigint timestamps
      const last = this.lastQueuedTime < first.time ? first.time : this.lastQueuedTime;
      limit = first.time + (last - first.time) / 2n;
      this.nextFlush = limit;
    } else {
      limit = this.nextFlush;
    }
    this.deliverUpTo(limit);
    if (kind === 'round') this.nextFlush = this.maxTime;
  }

  private sort(): void {
    if (!this.sorted) {
      // Array.prototype.sort is stable and fast on the nearly sorted runs a
      // round leaves; seq breaks time ties in file order anyway.
      this.pending.sort(byTimeThenFileOrder);
      this.sorted = true;
    }
  }

  private deliverUpTo(limit: bigint): void {
    if (limit < 0n || this.pending.length === 0) return;
    this.sort();
    const p = this.pending;
    // first index whose time is > limit
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p[mid]!.time <= limit) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return;
    for (let i = 0; i < lo; i++) {
      const e = p[i]!;
      this.ready.push(e.item);
      this.bytes -= e.size + ENTRY_OVERHEAD;
    }
    this.lastFlush = p[lo - 1]!.time;
    this.stats.delivered += lo;
    this.pending = lo === p.length ? [] : p.slice(lo);
  }

  /** Take (and clear) the records released so far. */
  drain(): T[] {
    const r = this.ready;
    if (r.length === 0) return r;
    this.ready = [];
    return r;
  }
}
