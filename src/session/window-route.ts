/**
 * The session's taker of the reader's ordinary records (RecordsOptions.take):
 * a timed record goes from the reader's window straight into the reorder
 * queue (a copy into QueuedRecords' slab), with no RawRecord made for it. The
 * RawRecord the reader made for every record, only for the session to copy
 * it into the queue and drop it, was a tenth of `script`'s time on a plain
 * recording (2.7 M samples: the object, its young-generation garbage, the
 * route through the batch).
 *
 * It reads the time where RawRecord.timeOffset / perfTimeOffset read it, and
 * queues what Session.route would queue, in the same order: it queues only
 * into an empty batch, and stops after the first record it leaves to route()
 * (untimed, a user record, one whose time needs its body parsed), which it puts
 * in the batch as a RawRecord; the session routes the batch before the taker
 * runs again. It also stops when the queue released records (a HALF flush),
 * so that the session delivers them before what follows.
 */
import { RecordType } from '../abi/record-type.js';
import { RawRecord } from '../perfdata/raw-record.js';
import { type BatchSource, ordinary, type OrdinaryTaker } from '../perfdata/record-batches.js';
import { hasSampleIdTrailer } from '../perfdata/records/index.js';
import type { AttrLayout } from '../perfdata/layout.js';
import type { Window } from '../perfdata/window.js';
import type { OrderedEvents } from './ordered-events.js';
import type { QueuedRecords } from './queued-records.js';

/** A taker for deliverOrdered's queue; `perfTimes` as SessionOptions.perfTimes. */
export function windowRouter(oe: OrderedEvents<number>, q: QueuedRecords, perfTimes: boolean): OrdinaryTaker {
  return (w, batch, f) => routeWindow(w, batch, f, oe, q, perfTimes);
}

/**
 * Where the record's u64 time is, or -1 when the taker leaves the record to
 * route(): no layout or no time field (untimed), or a TEXT_POKE, KSYMBOL or
 * BPF_EVENT read by its real time (the trailer's place depends on the body).
 */
function timeAt(type: number, size: number, L: AttrLayout | undefined, perfTimes: boolean): number {
  if (!L) return -1;
  if (type === RecordType.SAMPLE) {
    const o = L.sampleTimeOffset;
    return o >= 0 && o + 8 <= size ? o : -1;
  }
  if (!(L.trailerTimeFromEnd > 0 && hasSampleIdTrailer(type) && size - L.trailerSize >= 8)) return -1;
  if (!perfTimes && (type === RecordType.TEXT_POKE || type === RecordType.KSYMBOL || type === RecordType.BPF_EVENT))
    return -1;
  return size - L.trailerTimeFromEnd;
}

/** The u32 at b[o …] in the file's byte order. */
function u32(b: Uint8Array, o: number, le: boolean): number {
  return le
    ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0
    : ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function routeWindow(
  w: Window,
  batch: RawRecord[],
  f: BatchSource,
  oe: OrderedEvents<number>,
  q: QueuedRecords,
  perfTimes: boolean,
): boolean {
  // records the reader put in the batch (unpacked from COMPRESSED, …) are routed before anything after them
  if (batch.length) return true;
  const le = f.le;
  while (w.available >= 8) {
    const type = w.u32At(0, le);
    const size = w.u16At(6, le);
    if (size < 8 || w.available < size || !ordinary(type)) return false;
    const buf = w.array;
    const off = w.offset;
    const at = w.pos;
    const L = f.layoutFor(buf, type, size, off);
    const o = type < RecordType.HEADER_ATTR ? timeAt(type, size, L, perfTimes) : -1;
    const th = o < 0 ? 0 : u32(buf, off + o + (le ? 4 : 0), le);
    const tl = o < 0 ? 0 : u32(buf, off + o + (le ? 0 : 4), le);
    w.advance(size);
    if ((th === 0 && tl === 0) || (th === 0xffffffff && tl === 0xffffffff)) {
      batch.push(new RawRecord(buf, at, le, L, f.textPokeAbi, 0, off, size));
      return true;
    }
    oe.queueHalves(th, tl, size, q.addBytes(buf, off, size, at, L));
    if (oe.ready.length) return true;
  }
  return false;
}
