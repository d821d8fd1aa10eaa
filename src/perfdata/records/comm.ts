import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_COMM (3): u32 pid, tid; char comm[] (NUL, padded to 8). misc COMM_EXEC marks exec. */
export interface CommRecord extends KernelRecordHead {
  kind: 'comm';
  pid: number;
  tid: number;
  comm: string;
}

export function decodeComm(r: ByteReader, h: RecordHead): CommRecord {
  return { kind: 'comm', ...h, pid: r.i32(), tid: r.i32(), comm: r.cstring() };
}

export function encodeComm(rec: CommRecord, w: ByteWriter): void {
  const start = w.pos;
  w.i32(rec.pid).i32(rec.tid).cstring(rec.comm);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
