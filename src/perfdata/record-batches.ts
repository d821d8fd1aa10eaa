/**
 * Helpers of PerfFile.recordBatches(): how big a batch grows, which records end
 * one, and the payload read (or skipped) that follows AUXTRACE / HEADER_TRACING_DATA.
 */
import { ByteReader } from '../io/byte-reader.js';
import { RecordType } from '../abi/record-type.js';
import type { RawRecord } from './raw-record.js';
import { structureName } from './records/index.js';
import type { Window } from './window.js';

/** Most records in one batch (bounds what a batch of unpacked COMPRESSED contents holds). */
export const BATCH_RECORDS = 512;

/** Record types PerfFile learns from (attrs, ids, names, features): the records after them may read differently. */
export function changesReading(type: number): boolean {
  return (
    type === RecordType.HEADER_ATTR ||
    type === RecordType.ID_INDEX ||
    type === RecordType.EVENT_UPDATE ||
    type === RecordType.HEADER_FEATURE
  );
}

/** The payload after an AUXTRACE or HEADER_TRACING_DATA record (its size is in the record). */
export async function readTrailingPayload(w: Window, raw: RawRecord): Promise<Uint8Array> {
  return w.readPayload(trailingSize(raw), `${structureName(raw.type)} payload`);
}

/** Step over that payload unread (a file seeks past it): for readers that want the records only. */
export async function skipTrailingPayload(w: Window, raw: RawRecord): Promise<void> {
  await w.skip(trailingSize(raw), `${structureName(raw.type)} payload`);
}

function trailingSize(raw: RawRecord): number {
  const r = new ByteReader(raw.bytes, raw.le, raw.fileOffset, structureName(raw.type));
  r.skip(8);
  if (raw.type === RecordType.AUXTRACE) {
    r.need(8, 'AUXTRACE (71) size');
    return r.u64n('AUXTRACE (71) size');
  }
  r.need(4, 'HEADER_TRACING_DATA (66) size');
  return r.u32();
}
