import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/**
 * A type id we do not know (newer kernel or perf): carried as bytes, never rejected.
 * `bytes` excludes the 8-byte header.
 */
export interface UnknownRecord extends KernelRecordHead {
  kind: 'unknown';
  bytes: Uint8Array;
}
export function decodeUnknown(r: ByteReader, h: RecordHead): UnknownRecord {
  return { kind: 'unknown', ...h, bytes: r.copy(r.remaining) };
}
export function encodeUnknown(rec: UnknownRecord, w: ByteWriter): void {
  w.bytes(rec.bytes);
}
