/**
 * Helpers of PerfFile.recordBatches(): how big a batch grows, which records end
 * one, and the payload read (or skipped) that follows AUXTRACE / HEADER_TRACING_DATA.
 */
import { ByteReader } from '../io/byte-reader.js';
import { RecordType } from '../abi/record-type.js';
import { RawRecord } from './raw-record.js';
import type { AttrLayout } from './layout.js';
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

/** Options of PerfFile.records() and recordBatches(). */
export interface RecordsOptions {
  /** Start at this absolute offset instead of the data section start (file mode; must be a record boundary). */
  from?: number;
  /**
   * 'expand' (default): deliver the records inside COMPRESSED records in place of it; 'raw': deliver COMPRESSED
   * records as they are; 'both': each COMPRESSED record, then the records inside it (a record that straddles two
   * comes after the second).
   */
  compressed?: 'expand' | 'raw' | 'both';
  /** false: AUXTRACE data is stepped over, not read (a file seeks past it), and `auxData` stays undefined. */
  auxData?: boolean;
  /** Takes the window's ordinary records (default takeOrdinary: all into the batches). */
  take?: OrdinaryTaker;
}

/** What takeOrdinary needs of the file being read (PerfFile). */
export interface BatchSource {
  readonly le: boolean;
  readonly textPokeAbi: 'final' | 'rfc';
  layoutFor(bytes: Uint8Array, type: number, size: number, at?: number): AttrLayout | undefined;
}

/**
 * What takes the window's ordinary records for recordBatches: takeOrdinary,
 * or a caller's (RecordsOptions.take) that keeps some of them itself. It
 * must stop where takeOrdinary stops, take whole records, and return true when
 * recordBatches must hand out `batch` now.
 */
export type OrdinaryTaker = (w: Window, batch: RawRecord[], f: BatchSource) => boolean;

/**
 * Move the window's whole ordinary records into `batch`, until it holds
 * BATCH_RECORDS (then true: the batch is full). Stops before the first
 * record recordBatches must take itself: one not whole in the window, a
 * header.size below 8, a record with a payload after it (AUXTRACE,
 * HEADER_TRACING_DATA), a COMPRESSED one, one the file learns from
 * (changesReading). For the records it takes it does what recordBatches' own
 * loop does.
 *
 * It is a plain function because recordBatches is an async generator: V8
 * does not optimise a loop inside an async function or generator while it
 * runs (no on-stack replacement into a resumed one), and this loop runs once
 * per record.
 */
export function takeOrdinary(w: Window, batch: RawRecord[], f: BatchSource): boolean {
  const le = f.le;
  while (batch.length < BATCH_RECORDS && w.available >= 8) {
    const type = w.u32At(0, le);
    const size = w.u16At(6, le);
    if (size < 8 || w.available < size || !ordinary(type)) return false;
    const buf = w.array;
    const off = w.offset;
    batch.push(new RawRecord(buf, w.pos, le, f.layoutFor(buf, type, size, off), f.textPokeAbi, 0, off, size));
    w.advance(size);
  }
  return batch.length >= BATCH_RECORDS;
}

/** Whether takeOrdinary may take a record of this type (see there). */
export function ordinary(type: number): boolean {
  return (
    type !== RecordType.AUXTRACE &&
    type !== RecordType.HEADER_TRACING_DATA &&
    type !== RecordType.COMPRESSED &&
    type !== RecordType.COMPRESSED2 &&
    !changesReading(type)
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
