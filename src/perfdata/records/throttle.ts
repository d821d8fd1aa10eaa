import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_THROTTLE (5) / UNTHROTTLE (6): u64 time, id, stream_id. */
export interface ThrottleRecord extends KernelRecordHead {
  kind: 'throttle' | 'unthrottle';
  time: bigint;
  id: bigint;
  streamId: bigint;
}
export function decodeThrottle(r: ByteReader, h: RecordHead): ThrottleRecord {
  return { kind: h.type === 5 ? 'throttle' : 'unthrottle', ...h, time: r.u64(), id: r.u64(), streamId: r.u64() };
}
export function encodeThrottle(rec: ThrottleRecord, w: ByteWriter): void {
  w.u64(rec.time).u64(rec.id).u64(rec.streamId);
}
