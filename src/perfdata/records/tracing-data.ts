import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/**
 * PERF_RECORD_HEADER_TRACING_DATA (66, pipe mode): u32 size; u32 pad (header.size 16: the C struct is padded).
 * `size` bytes of tracing data (already 8-aligned by perf) FOLLOW the record in the
 * stream; the reader hands them over as RawRecord.auxData.
 */
export interface TracingDataRecord extends RecordHead {
  kind: 'tracing_data';
  dataSize: number;
  data?: Uint8Array;
}
export function decodeTracingData(r: ByteReader, h: RecordHead): TracingDataRecord {
  return { kind: 'tracing_data', ...h, dataSize: r.u32() };
}
export function encodeTracingData(rec: TracingDataRecord, w: ByteWriter): void {
  w.u32(rec.dataSize).u32(0);
}
