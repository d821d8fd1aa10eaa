import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_COMPRESSED (81): zstd stream bytes to the end of the record (perf record -z). */
export interface CompressedRecord extends RecordHead {
  kind: 'compressed';
  data: Uint8Array;
}
export function decodeCompressed(r: ByteReader, h: RecordHead): CompressedRecord {
  return { kind: 'compressed', ...h, data: r.copy(r.remaining) };
}
export function encodeCompressed(rec: CompressedRecord, w: ByteWriter): void {
  w.bytes(rec.data);
}

/** PERF_RECORD_COMPRESSED2 (83, perf 6.15+): u64 data_size; data[data_size]; padding to 8. */
export interface Compressed2Record extends RecordHead {
  kind: 'compressed2';
  data: Uint8Array;
}
export function decodeCompressed2(r: ByteReader, h: RecordHead): Compressed2Record {
  const n = r.u64n('COMPRESSED2 (83).data_size');
  if (n > r.remaining) r.need(n); // throws the truncation error with its offset
  return { kind: 'compressed2', ...h, data: r.copy(n) };
}
export function encodeCompressed2(rec: Compressed2Record, w: ByteWriter): void {
  w.u64(rec.data.length).bytes(rec.data);
  w.zeros((8 - (rec.data.length % 8)) % 8);
}

/**
 * perf 6.16's record__pushfn sets a COMPRESSED2 header.size to the 8-aligned
 * length in a u16: 16 + data_size in 65529..65535 wraps to 0, and the padding
 * is not written (other readers, e.g. linux-perf-data, read these). Given a
 * size-0 COMPRESSED2's first 16 bytes: the record's real length, if it is one.
 */
export function wrappedCompressed2Size(head: Uint8Array, le: boolean): number | undefined {
  const dv = new DataView(head.buffer, head.byteOffset, 16);
  const n = 16 + Number(dv.getBigUint64(8, le));
  return n >= 65529 && n <= 65535 ? n : undefined;
}
