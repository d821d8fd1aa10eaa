import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { PERF_ATTR_SIZE_VER0, type EventAttr } from '../../abi/event-attr.js';
import { decodeEventAttr, encodeEventAttr } from '../event-attr-codec.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_HEADER_ATTR (64, pipe mode): struct perf_event_attr (attr.size bytes); u64 id[] to the end. */
export interface HeaderAttrRecord extends RecordHead {
  kind: 'header_attr';
  attr: EventAttr;
  ids: bigint[];
}
export function decodeHeaderAttr(r: ByteReader, h: RecordHead): HeaderAttrRecord {
  // the attr's own size field (offset 4) says how long it is in this file
  r.need(8, 'HEADER_ATTR (64).attr');
  const size = r.view.getUint32(r.pos + 4, r.le) || PERF_ATTR_SIZE_VER0;
  if (size < PERF_ATTR_SIZE_VER0 || size > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + r.pos + 4,
      structure: 'HEADER_ATTR (64).attr.size',
      actual: size,
      expected: `${PERF_ATTR_SIZE_VER0}..${r.remaining}`,
    });
  }
  const attr = decodeEventAttr(r, size);
  const ids: bigint[] = [];
  while (r.remaining >= 8) ids.push(r.u64());
  return { kind: 'header_attr', ...h, attr, ids };
}
export function encodeHeaderAttr(rec: HeaderAttrRecord, w: ByteWriter): void {
  encodeEventAttr(w, rec.attr);
  for (const id of rec.ids) w.u64(id);
}

/** PERF_RECORD_HEADER_EVENT_TYPE (65, deprecated): u64 event_id; char name[64]. */
export interface EventTypeRecord extends RecordHead {
  kind: 'header_event_type';
  eventId: bigint;
  name: string;
}
export function decodeEventType(r: ByteReader, h: RecordHead): EventTypeRecord {
  return { kind: 'header_event_type', ...h, eventId: r.u64(), name: r.cstring(Math.min(64, r.remaining)) };
}
export function encodeEventType(rec: EventTypeRecord, w: ByteWriter): void {
  const b = new Uint8Array(64);
  b.set(Buffer.from(rec.name, 'utf8').subarray(0, 63));
  w.u64(rec.eventId).bytes(b);
}
