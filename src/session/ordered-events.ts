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

const TWO32 = 0x100000000;

/** a < b for times given as u32 halves (hi = -1: perf's -1, below every time). */
function before(ah: number, al: number, bh: number, bl: number): boolean {
  return ah < bh || (ah === bh && al < bl);
}

/** n undefined slots (a packed array, so stores inside it stay on the fast path). */
function slots<T>(n: number): (T | undefined)[] {
  return new Array<T | undefined>(n).fill(undefined);
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

  // The queue as parallel arrays (no object, no BigInt per record: a queued
  // record outlives young-generation GCs, so each object it brings costs a
  // copy and a promotion). Times are u64 halves. Slots [head, tail) are
  // queued, in queue order until sorted; ties sort by slot, i.e. file order.
  private hi: Float64Array = new Float64Array(1024);
  private lo: Float64Array = new Float64Array(1024);
  private sizes: Float64Array = new Float64Array(1024);
  /**
   * As long as `hi`, allocated at full length: a store past an array's end
   * grows it in the runtime (a new backing store, ~1.5× larger, each time), and
   * refilling an emptied array round after round cost `script` a tenth of its time.
   */
  private items: (T | undefined)[] = slots(1024);
  /** Where sort() merges into (then swapped with the queue's arrays). */
  private scratchHi: Float64Array = new Float64Array(0);
  private scratchLo: Float64Array = new Float64Array(0);
  private scratchSizes: Float64Array = new Float64Array(0);
  private scratchItems: (T | undefined)[] = slots(0);
  private head = 0;
  private tail = 0;
  private sorted = true;
  private bytes = 0;
  private readonly maxBytes: number;
  /** perf's oe->max_timestamp: the newest time queued so far (hi -1: none). */
  private maxHi = -1;
  private maxLo = 0;
  /** perf's oe->next_flush: the limit the next ROUND flush may deliver up to (hi -1: nothing). */
  private nextHi = -1;
  private nextLo = 0;
  /** perf's oe->last_flush: time of the last delivered record. */
  private lastHi = -1;
  private lastLo = 0;
  /** Time of the most recently queued record (perf's oe->last), for HALF. */
  private queuedHi = -1;
  private queuedLo = 0;
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
    return this.tail - this.head;
  }
  get queuedBytes(): number {
    return this.bytes;
  }

  /**
   * Queue one timed record. `size` is what it costs to keep (its byte length);
   * `item` must outlive the caller's read window (a copy).
   */
  queue(time: bigint, size: number, item: T): void {
    this.queueHalves(Number(time >> 32n), Number(time & 0xffffffffn), size, item);
  }

  /** `queue` with the time as its high and low u32 halves (what the reader reads). */
  queueHalves(h: number, l: number, size: number, item: T): void {
    if (before(h, l, this.lastHi, this.lastLo)) this.stats.unordered++;
    if (this.tail === this.hi.length) this.makeRoom();
    const n = this.tail;
    if (n > this.head && before(h, l, this.hi[n - 1]!, this.lo[n - 1]!)) this.sorted = false;
    this.hi[n] = h;
    this.lo[n] = l;
    this.sizes[n] = size;
    this.items[n] = item;
    this.tail = n + 1;
    this.stats.queued++;
    if (before(this.maxHi, this.maxLo, h, l)) {
      this.maxHi = h;
      this.maxLo = l;
    }
    this.queuedHi = h;
    this.queuedLo = l;
    this.bytes += size + ENTRY_OVERHEAD;
    if (this.bytes > this.stats.peakBytes) this.stats.peakBytes = this.bytes;
    if (this.bytes > this.maxBytes) this.flush('half');
  }

  /** The arrays are full: move the queued slots to the front, and double them when over half full. */
  private makeRoom(): void {
    const n = this.tail - this.head;
    const grow = n * 2 > this.hi.length;
    const cap = grow ? this.hi.length * 2 : this.hi.length;
    const move = (a: Float64Array): Float64Array => {
      if (!grow) return a.copyWithin(0, this.head, this.tail);
      const to = new Float64Array(cap);
      to.set(a.subarray(this.head, this.tail));
      return to;
    };
    this.hi = move(this.hi);
    this.lo = move(this.lo);
    this.sizes = move(this.sizes);
    const from = this.items;
    const items = grow ? slots<T>(cap) : from;
    for (let i = 0; i < n; i++) items[i] = from[this.head + i];
    for (let i = n; i < this.tail; i++) items[i] = undefined; // moved down: no longer queued here
    this.items = items;
    this.head = 0;
    this.tail = n;
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
    if (this.tail === this.head) return;
    this.stats.flushes[kind]++;
    if (kind === 'final') this.deliverUpTo(TWO32, 0);
    else if (kind === 'half') {
      this.sort();
      // perf: next_flush = first->timestamp + (last->timestamp - first->timestamp) / 2,
      // where `last` is the record queued last (not necessarily the newest). Rare: BigInt is fine here.
      const h0 = this.head;
      const first = BigInt(this.hi[h0]!) * BigInt(TWO32) + BigInt(this.lo[h0]!);
      const queued = BigInt(this.queuedHi) * BigInt(TWO32) + BigInt(this.queuedLo);
      const last = queued < first ? first : queued;
      const limit = first + (last - first) / 2n;
      this.nextHi = Number(limit >> 32n);
      this.nextLo = Number(limit & 0xffffffffn);
      this.deliverUpTo(this.nextHi, this.nextLo);
    } else {
      this.deliverUpTo(this.nextHi, this.nextLo);
      this.nextHi = this.maxHi;
      this.nextLo = this.maxLo;
    }
  }

  /**
   * Sort the slots [head, tail) by (time, slot): the slot breaks ties in file
   * order. The queue is a few runs already in time order (perf record drains
   * one CPU's buffer after another, and what a flush leaves is sorted), so the
   * runs are found and merged pairwise, stably, between the arrays and a
   * scratch set: O(n log runs), no allocation once the scratch is grown. A
   * comparison sort of an index array cost `script` a fifth of its time.
   */
  private sort(): void {
    if (this.sorted) return;
    const { head, tail } = this;
    let bounds = [head];
    for (let i = head + 1; i < tail; i++)
      if (before(this.hi[i]!, this.lo[i]!, this.hi[i - 1]!, this.lo[i - 1]!)) bounds.push(i);
    bounds.push(tail);
    if (this.scratchHi.length !== this.hi.length) {
      this.scratchHi = new Float64Array(this.hi.length);
      this.scratchLo = new Float64Array(this.hi.length);
      this.scratchSizes = new Float64Array(this.hi.length);
      this.scratchItems = slots(this.hi.length);
    }
    while (bounds.length > 2) {
      const next = [head];
      for (let r = 0; r + 1 < bounds.length; r += 2) {
        const end = r + 2 < bounds.length ? bounds[r + 2]! : bounds[r + 1]!;
        this.mergeRuns(bounds[r]!, bounds[r + 1]!, end);
        next.push(end);
      }
      // the merged slots are in the scratch arrays: they become the queue
      [this.hi, this.scratchHi] = [this.scratchHi, this.hi];
      [this.lo, this.scratchLo] = [this.scratchLo, this.lo];
      [this.sizes, this.scratchSizes] = [this.scratchSizes, this.sizes];
      [this.items, this.scratchItems] = [this.scratchItems, this.items];
      bounds = next;
    }
    // the other set no longer keeps the records alive
    for (let i = head; i < tail; i++) this.scratchItems[i] = undefined;
    this.sorted = true;
  }

  /** Merge the sorted slots [a, m) and [m, e) into the scratch arrays' [a, e); on ties the left first. */
  private mergeRuns(a: number, m: number, e: number): void {
    const { hi, lo, sizes, items, scratchHi: h2, scratchLo: l2, scratchSizes: s2, scratchItems: i2 } = this;
    let i = a;
    let j = m;
    for (let k = a; k < e; k++) {
      const right = i >= m || (j < e && before(hi[j]!, lo[j]!, hi[i]!, lo[i]!));
      const from = right ? j++ : i++;
      h2[k] = hi[from]!;
      l2[k] = lo[from]!;
      s2[k] = sizes[from]!;
      i2[k] = items[from];
    }
  }

  /** Deliver every record with time <= the limit (hi TWO32: all of them; hi -1: none). */
  private deliverUpTo(lh: number, ll: number): void {
    if (lh < 0 || this.tail === this.head) return;
    this.sort();
    const { hi, lo, sizes, items } = this;
    // first slot whose time is > limit
    let a = this.head;
    let b = this.tail;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (!before(lh, ll, hi[mid]!, lo[mid]!)) a = mid + 1;
      else b = mid;
    }
    if (a === this.head) return;
    for (let i = this.head; i < a; i++) {
      this.ready.push(items[i]!);
      items[i] = undefined; // delivered: no longer kept alive by the queue
      this.bytes -= sizes[i]! + ENTRY_OVERHEAD;
    }
    this.lastHi = hi[a - 1]!;
    this.lastLo = lo[a - 1]!;
    this.stats.delivered += a - this.head;
    this.head = a;
    if (a === this.tail) {
      this.head = 0;
      this.tail = 0;
    }
  }

  /** Take (and clear) the records released so far. */
  drain(): T[] {
    const r = this.ready;
    if (r.length === 0) return r;
    this.ready = [];
    return r;
  }
}
