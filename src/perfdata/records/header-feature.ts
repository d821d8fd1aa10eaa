import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_HEADER_FEATURE (80, pipe mode): u64 feat_id; the feature section's bytes to the end. */
export interface HeaderFeatureRecord extends RecordHead {
  kind: 'header_feature';
  featId: number;
  data: Uint8Array;
}
export function decodeHeaderFeature(r: ByteReader, h: RecordHead): HeaderFeatureRecord {
  return { kind: 'header_feature', ...h, featId: r.u64n('HEADER_FEATURE (80).feat_id'), data: r.copy(r.remaining) };
}
export function encodeHeaderFeature(rec: HeaderFeatureRecord, w: ByteWriter): void {
  w.u64(rec.featId).bytes(rec.data);
}
