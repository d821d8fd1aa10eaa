import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_CGROUP (19): u64 id; char path[] (padded to 8). */
export interface CgroupRecord extends KernelRecordHead {
  kind: 'cgroup';
  id: bigint;
  path: string;
}
export function decodeCgroup(r: ByteReader, h: RecordHead): CgroupRecord {
  return { kind: 'cgroup', ...h, id: r.u64(), path: r.cstring() };
}
export function encodeCgroup(rec: CgroupRecord, w: ByteWriter): void {
  const start = w.pos;
  w.u64(rec.id).cstring(rec.path);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
