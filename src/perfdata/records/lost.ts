import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_LOST (2): u64 id, lost. */
export interface LostRecord extends KernelRecordHead {
  kind: 'lost';
  id: bigint;
  lost: bigint;
}
export function decodeLost(r: ByteReader, h: RecordHead): LostRecord {
  return { kind: 'lost', ...h, id: r.u64(), lost: r.u64() };
}
export function encodeLost(rec: LostRecord, w: ByteWriter): void {
  w.u64(rec.id).u64(rec.lost);
}

/** PERF_RECORD_LOST_SAMPLES (13): u64 lost. */
export interface LostSamplesRecord extends KernelRecordHead {
  kind: 'lost_samples';
  lost: bigint;
}
export function decodeLostSamples(r: ByteReader, h: RecordHead): LostSamplesRecord {
  return { kind: 'lost_samples', ...h, lost: r.u64() };
}
export function encodeLostSamples(rec: LostSamplesRecord, w: ByteWriter): void {
  w.u64(rec.lost);
}
