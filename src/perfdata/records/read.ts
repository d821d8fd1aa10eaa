import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { AttrLayout } from '../layout.js';
import type { DecodeContext, KernelRecordHead, RecordHead } from './common.js';
import { decodeReadFormat, encodeReadFormat, type ReadValues } from './read-format.js';

/** PERF_RECORD_READ (8): u32 pid, tid; struct read_format (per the attr's read_format). */
export interface ReadRecord extends KernelRecordHead {
  kind: 'read';
  pid: number;
  tid: number;
  read: ReadValues;
}
export function decodeRead(r: ByteReader, h: RecordHead, ctx: DecodeContext): ReadRecord {
  return { kind: 'read', ...h, pid: r.i32(), tid: r.i32(), read: decodeReadFormat(r, ctx.layout?.readFormat ?? 0n) };
}
export function encodeRead(rec: ReadRecord, w: ByteWriter, layout?: AttrLayout): void {
  w.i32(rec.pid).i32(rec.tid);
  encodeReadFormat(rec.read, w, layout?.readFormat ?? 0n);
}
