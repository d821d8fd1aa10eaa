/**
 * A session: a PerfFile read in time order, the way perf's
 * perf_session__process_events delivers records to a tool.
 *
 *   const s = await openSession('perf.data');
 *   for await (const raw of s.events()) { ... raw.decode() ... s.eventName(raw) }
 *   await s.close();
 *
 * What perf does, and we copy:
 * - perf's user records (type ≥ 64: HEADER_ATTR, FINISHED_ROUND, ID_INDEX, …)
 *   are processed the moment they are read, never queued; FINISHED_ROUND
 *   first flushes the queue by the two-round rule (ordered-events.ts), and is
 *   then delivered itself.
 * - A kernel record is queued by its time (SAMPLE time, or the sample_id_all
 *   trailer). A record without a time, or with time 0 (perf's synthesized
 *   MMAP/COMM/FORK records) or ~0, is delivered at once: perf's
 *   ordered_events__queue refuses it with -ETIME and delivers it directly.
 * - Without sample_id_all perf falls back to unordered processing ("WARNING: No
 *   sample_id_all support, falling back to unordered processing"); so do we.
 * - FINISHED_INIT (written by perf record after the synthesized records) is
 *   not a round boundary: perf 6.1 has no flush there (tool->finished_init is
 *   a stub for perf script/report). In the files perf writes only untimed
 *   records precede it, so flushing there would change nothing; a file that
 *   queued timed records before it would get them one round early.
 *
 * Records come out as the reader's RawRecord, one at a time (`events()`) or in
 * batches (`batches()`). A record delivered at once is the reader's zero-copy
 * view (valid until the next batch); one that went through the queue is a copy
 * in a slab (or, unpacked from COMPRESSED, a view of the unpacker's own
 * buffer), held as numbers while queued (queued-records.ts). Errors keep
 * pointing at the record's file offset either way.
 */
import { readFileFeature } from '../perfdata/file-feature.js';
import { Feature } from '../abi/feature.js';
import { RecordType } from '../abi/record-type.js';
import { attrFlag } from '../abi/event-attr.js';
import { isFormatError } from '../io/errors.js';
import { PerfFile, type AttrEntry, type ReaderOptions } from '../perfdata/perf-file.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { defaultEventName } from './event-names.js';
import { OrderedEvents, type OrderedEventsStats } from './ordered-events.js';
import { QueuedRecords } from './queued-records.js';
import { windowRouter } from './window-route.js';

/** Most records in a batch of released records (see Session.released). */
const RELEASE_BATCH = 512;

export interface SessionOptions extends ReaderOptions {
  /** Deliver in time order (default true). false: file order, as `perf script --show-round-events` does. */
  ordered?: boolean;
  /** Byte budget of the reorder queue before a HALF flush (default 64 MiB). */
  maxQueueBytes?: number;
  /** Deliver a FINISHED_ROUND before the records it releases (what `perf script -D` prints), not after. */
  roundBeforeFlush?: boolean;
  /** Unordered delivery only: COMPRESSED records too, each before its contents (RecordsOptions 'both'). */
  withCompressed?: boolean;
  /**
   * Order by the time perf reads (RawRecord.perfTimestamp): Linux 6.1's inflated
   * KSYMBOL/BPF_EVENT/TEXT_POKE records then count as time 0 and go out at once,
   * as perf delivers them (what `script` needs to print perf's order). Default
   * false: their real time, recovered from mid-record.
   */
  perfTimes?: boolean;
  /**
   * false: every record goes through the reader's batches to the queue, none
   * straight from the window (window-route.ts); the order is the same (tests
   * compare the two).
   */
  windowRoute?: boolean;
  /**
   * Records that went through the queue are objects made again and again (a
   * ring of REUSE_RING, queued-records.ts), no longer one per record: each is
   * valid only while its batch is consumed, as the reader's window views are.
   * For a consumer that keeps no record past its batch (`script`, `dump`); default false.
   */
  reuseRecords?: boolean;
}

export class Session {
  readonly file: PerfFile;
  readonly ordered: boolean;
  private readonly maxQueueBytes: number | undefined;
  private readonly roundBeforeFlush: boolean;
  private readonly withCompressed: boolean;
  private readonly perfTimes: boolean;
  private readonly windowRoute: boolean;
  private readonly reuseRecords: boolean;
  private readonly layoutIndex = new Map<AttrLayout, number>();
  private lastLayout: AttrLayout | undefined;
  private lastIndex = -1;
  private names: (string | undefined)[] = [];
  private descNames: Map<bigint, string> | undefined;
  private descByIndex: string[] = [];
  private readonly updateNames = new Map<bigint, string>();
  /** Queue statistics of the last events() run (undefined when unordered). */
  queueStats: OrderedEventsStats | undefined;

  constructor(file: PerfFile, opts: SessionOptions = {}) {
    this.file = file;
    const first = file.attrs[0];
    // perf_session__new: ordered delivery needs sample_id_all (pipe mode: attrs come later, assume it)
    this.ordered = (opts.ordered ?? true) && (first === undefined || attrFlag(first.attr, 'sample_id_all'));
    this.maxQueueBytes = opts.maxQueueBytes;
    this.roundBeforeFlush = opts.roundBeforeFlush ?? false;
    this.withCompressed = opts.withCompressed ?? false;
    this.perfTimes = opts.perfTimes ?? false;
    this.windowRoute = opts.windowRoute ?? true;
    this.reuseRecords = opts.reuseRecords ?? false;
  }

  /** Read the event names a file-mode file carries (HEADER_EVENT_DESC). */
  async loadNames(): Promise<void> {
    const fd = await readFileFeature(this.file, Feature.EVENT_DESC);
    if (fd?.kind !== 'event_desc') return;
    this.descNames = new Map();
    this.descByIndex = fd.events.map((e) => e.name);
    for (const e of fd.events) for (const id of e.ids) this.descNames.set(id, e.name);
    this.names = [];
  }

  /** Index into file.attrs of the attr a record resolved to, or -1. */
  attrIndexOf(raw: RawRecord): number {
    const L = raw.layout;
    if (!L) return -1;
    if (L === this.lastLayout) return this.lastIndex; // runs of records of one event
    let i = this.layoutIndex.get(L);
    if (i === undefined) {
      i = -1;
      for (let k = 0; k < this.file.attrs.length; k++) if (this.file.layoutOf(k) === L) i = k;
      this.layoutIndex.set(L, i);
    }
    this.lastLayout = L;
    this.lastIndex = i;
    return i;
  }

  attrOf(raw: RawRecord): AttrEntry | undefined {
    const i = this.attrIndexOf(raw);
    return i < 0 ? undefined : this.file.attrs[i];
  }

  /**
   * perf's evsel__name for attrs[i]: the recorded name (EVENT_DESC by id, then
   * by position; pipe mode: EVENT_UPDATE NAME or a HEADER_FEATURE event_desc),
   * else perf's generic name.
   */
  eventNameAt(i: number): string {
    const cached = this.names[i];
    if (cached !== undefined) return cached;
    const a = this.file.attrs[i];
    if (!a) return '[unknown]';
    let name = a.name;
    for (const id of a.ids) {
      name ??= this.updateNames.get(id) ?? this.descNames?.get(id);
      if (name) break;
    }
    name ??= this.descByIndex.length === this.file.attrs.length ? this.descByIndex[i] : undefined;
    name ??= defaultEventName(a.attr);
    this.names[i] = name;
    return name;
  }

  eventName(raw: RawRecord): string {
    const i = this.attrIndexOf(raw);
    return i < 0 ? '[unknown]' : this.eventNameAt(i);
  }

  /** Names of every attr, in file order (perf's evlist). */
  eventNames(): string[] {
    return this.file.attrs.map((_, i) => this.eventNameAt(i));
  }

  /** A HEADER_FEATURE went by: the reader files it once we move on, so look at the next record. */
  private featurePending = false;

  /**
   * Learn names from user records as they pass (pipe mode: EVENT_UPDATE NAME,
   * a HEADER_FEATURE event_desc). Call for every record of type ≥ 64 and for the
   * record after one (`needsObserve`).
   */
  async observe(raw: RawRecord): Promise<void> {
    if (this.featurePending) {
      this.featurePending = false;
      if (!this.descNames) {
        const fd = await readFileFeature(this.file, Feature.EVENT_DESC);
        if (fd?.kind === 'event_desc') {
          this.descNames = new Map();
          this.descByIndex = fd.events.map((e) => e.name);
          for (const e of fd.events) for (const id of e.ids) this.descNames.set(id, e.name);
          this.names = [];
        }
      }
    }
    if (raw.type === RecordType.EVENT_UPDATE) {
      const rec = raw.decode();
      if (rec.kind === 'event_update' && rec.name !== undefined) {
        this.updateNames.set(rec.id, rec.name);
        this.names = [];
      }
    } else if (raw.type === RecordType.HEADER_FEATURE && this.file.pipe) {
      this.featurePending = true;
    } else if (raw.type === RecordType.HEADER_ATTR) {
      this.names = [];
    }
  }

  /** Whether `observe` must see this record. */
  needsObserve(raw: RawRecord): boolean {
    return raw.type >= RecordType.HEADER_ATTR || this.featurePending;
  }

  /**
   * Every record, in perf's delivery order (see the file comment).
   * Throws FormatError (naming the file and offset) for malformed input.
   */
  async *events(): AsyncGenerator<RawRecord> {
    for await (const batch of this.batches()) yield* batch;
  }

  /**
   * `events()` in arrays: a promise per batch, not per record (what the hot
   * consumers take). A record in a batch that is the reader's window view stays
   * valid until the next batch is asked for. Records the session or reader learn
   * from (attrs, EVENT_UPDATE, features) apply from the next record on, as in
   * `events()`; on an error the records delivered before it come first.
   */
  async *batches(): AsyncGenerator<RawRecord[]> {
    try {
      yield* this.deliver();
    } catch (e) {
      throw this.named(e);
    }
  }

  /** A FormatError from a decode anywhere above the reader, now naming the file. */
  named(e: unknown): unknown {
    return isFormatError(e) ? e.withFile(this.file.path) : e;
  }

  private async *deliver(): AsyncGenerator<RawRecord[]> {
    if (!this.ordered) {
      this.queueStats = undefined;
      for await (const batch of this.file.recordBatches({ compressed: this.withCompressed ? 'both' : 'expand' })) {
        // what precedes a record the session learns from goes out before it learns
        let from = 0;
        for (let i = 0; i < batch.length; i++) {
          const raw = batch[i]!;
          if (!this.needsObserve(raw)) continue;
          if (i > from) yield batch.slice(from, i);
          from = i;
          await this.observe(raw);
        }
        if (from < batch.length) yield from ? batch.slice(from) : batch;
      }
      return;
    }
    const oe = new OrderedEvents<number>({ maxQueueBytes: this.maxQueueBytes });
    const q = new QueuedRecords(this.file.le, this.file.textPokeAbi);
    this.queueStats = oe.stats;
    try {
      yield* this.deliverOrdered(oe, q);
    } catch (e) {
      // a pipe that ends inside a record is, to perf, the end of the stream ("unexpected end of
      // event stream"): it delivers what it queued. We do too, then report the cut.
      if (!this.file.pipe || !isFormatError(e) || e.kind !== 'truncated') throw e;
      oe.finish();
      const rest = oe.drain().map((h) => q.take(h));
      if (rest.length) yield rest;
      throw e;
    }
  }

  private async *deliverOrdered(oe: OrderedEvents<number>, q: QueuedRecords): AsyncGenerator<RawRecord[]> {
    let out: RawRecord[] = [];
    // file mode: timed records go from the reader's window into the queue (window-route.ts); a pipe's
    // records may need observing first (a HEADER_FEATURE's), so all go through route()
    const take = this.file.pipe || !this.windowRoute ? undefined : windowRouter(oe, q, this.perfTimes);
    for await (const batch of this.file.recordBatches({ take })) {
      try {
        let observed = -1;
        for (let i = 0; ; ) {
          if (i < batch.length) i = this.route(batch, i, observed, oe, q, out);
          // the queue released records: in the batch's route, or in the taker's (then the batch may be empty)
          if (oe.ready.length) {
            yield* this.released(oe.drain(), q, out);
            continue;
          }
          const raw = batch[i];
          if (!raw) break;
          if (i !== observed && this.needsObserve(raw)) {
            // what was delivered before this record is consumed before the session learns from it
            if (out.length) {
              yield out;
              out = [];
            }
            await this.observe(raw);
            observed = i; // route() takes it on from here
            continue;
          }
          // FINISHED_ROUND
          if (this.roundBeforeFlush) out.push(raw);
          oe.finishedRound();
          if (oe.ready.length) yield* this.released(oe.drain(), q, out);
          if (!this.roundBeforeFlush) out.push(raw);
          i++;
        }
      } catch (e) {
        if (out.length) yield out; // delivered before the error, as one record at a time would be
        throw e;
      }
      // window views in `out` are only valid until the reader's next batch
      if (out.length) {
        yield out;
        out = [];
      }
    }
    oe.finish();
    const rest = oe.drain().map((h) => q.take(h));
    if (rest.length) yield rest;
  }

  /**
   * Route batch[i…] into the queue (timed samples and side-band) or `out`
   * (records without a time, and the header records after the data), and
   * return the index of the first record not routed: one the session must
   * observe first (unless it is batch[observed], observed already), a
   * FINISHED_ROUND, or the batch's end; or, when the queue released records
   * (oe.ready is not empty), the index after the record that made it.
   *
   * A plain method because deliverOrdered is an async generator, whose loops
   * V8 does not optimise while it runs (no on-stack replacement into a resumed
   * generator): this is the per-record loop.
   */
  private route(
    batch: RawRecord[],
    i: number,
    observed: number,
    oe: OrderedEvents<number>,
    q: QueuedRecords,
    out: RawRecord[],
  ): number {
    for (; i < batch.length; i++) {
      const raw = batch[i]!;
      if (i !== observed && this.needsObserve(raw)) return i;
      if (raw.type >= RecordType.HEADER_ATTR) {
        if (raw.type === RecordType.FINISHED_ROUND) return i;
        out.push(raw);
        continue;
      }
      // the time as two u32 halves: no BigInt per record
      const o = this.perfTimes ? raw.perfTimeOffset() : raw.timeOffset();
      const th = o < 0 ? 0 : raw.u32At(raw.le ? o + 4 : o);
      const tl = o < 0 ? 0 : raw.u32At(raw.le ? o : o + 4);
      if ((th === 0 && tl === 0) || (th === 0xffffffff && tl === 0xffffffff)) {
        out.push(raw); // no time, 0 or -1: delivered at once, as perf
        continue;
      }
      oe.queueHalves(th, tl, raw.size, q.add(raw));
      if (oe.ready.length) return i + 1;
    }
    return i;
  }

  /**
   * Records the queue released (handles), after those in `out` (emptied): in
   * batches of RELEASE_BATCH. A round is thousands of records; made into
   * RawRecords all at once they outlived young-generation GCs, each of which
   * then copied them (a tenth of `script`'s time).
   */
  private *released(ready: number[], q: QueuedRecords, out: RawRecord[]): Generator<RawRecord[]> {
    let i = 0;
    while (out.length + ready.length - i > RELEASE_BATCH) {
      const batch = out.splice(0);
      const end = i + RELEASE_BATCH - batch.length;
      takeInto(batch, q, ready, i, end, this.reuseRecords);
      i = end;
      yield batch;
    }
    takeInto(out, q, ready, i, ready.length, this.reuseRecords);
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** The queued records ready[from, to) onto `batch` (out of the generator above: see route()). */
function takeInto(
  batch: RawRecord[],
  q: QueuedRecords,
  ready: number[],
  from: number,
  to: number,
  reuse: boolean,
): void {
  for (let i = from; i < to; i++) batch.push(q.take(ready[i]!, reuse));
}

/**
 * Open a perf.data file (or '-' for a pipe on stdin) for time-ordered reading;
 * event names from HEADER_EVENT_DESC are loaded up front.
 * Throws FormatError for a malformed header, attr section or event_desc.
 */
export async function openSession(path: string, opts: SessionOptions = {}): Promise<Session> {
  const file = await PerfFile.open(path, opts);
  try {
    const s = new Session(file, opts);
    if (!file.pipe) await s.loadNames();
    return s;
  } catch (e) {
    await file.close();
    throw isFormatError(e) ? e.withFile(path) : e;
  }
}
