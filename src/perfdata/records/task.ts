import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_FORK (7) and PERF_RECORD_EXIT (4): u32 pid, ppid, tid, ptid; u64 time. */
export interface TaskRecord extends KernelRecordHead {
  kind: 'fork' | 'exit';
  pid: number;
  ppid: number;
  tid: number;
  ptid: number;
  time: bigint;
}
export type ForkRecord = TaskRecord & { kind: 'fork' };
export type ExitRecord = TaskRecord & { kind: 'exit' };

function decodeTask(kind: 'fork' | 'exit', r: ByteReader, h: RecordHead): TaskRecord {
  return { kind, ...h, pid: r.i32(), ppid: r.i32(), tid: r.i32(), ptid: r.i32(), time: r.u64() };
}
export const decodeFork = (r: ByteReader, h: RecordHead): ForkRecord => decodeTask('fork', r, h) as ForkRecord;
export const decodeExit = (r: ByteReader, h: RecordHead): ExitRecord => decodeTask('exit', r, h) as ExitRecord;

export function encodeTask(rec: TaskRecord, w: ByteWriter): void {
  w.i32(rec.pid).i32(rec.ppid).i32(rec.tid).i32(rec.ptid).u64(rec.time);
}
export const encodeFork = encodeTask;
export const encodeExit = encodeTask;
