import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_AUX (11): u64 aux_offset, aux_size, flags (PERF_AUX_FLAG_*). */
export interface AuxRecord extends KernelRecordHead {
  kind: 'aux';
  auxOffset: bigint;
  auxSize: bigint;
  flags: bigint;
}
export function decodeAux(r: ByteReader, h: RecordHead): AuxRecord {
  return { kind: 'aux', ...h, auxOffset: r.u64(), auxSize: r.u64(), flags: r.u64() };
}
export function encodeAux(rec: AuxRecord, w: ByteWriter): void {
  w.u64(rec.auxOffset).u64(rec.auxSize).u64(rec.flags);
}

/** PERF_RECORD_ITRACE_START (12): u32 pid, tid. */
export interface ItraceStartRecord extends KernelRecordHead {
  kind: 'itrace_start';
  pid: number;
  tid: number;
}
export function decodeItraceStart(r: ByteReader, h: RecordHead): ItraceStartRecord {
  return { kind: 'itrace_start', ...h, pid: r.i32(), tid: r.i32() };
}
export function encodeItraceStart(rec: ItraceStartRecord, w: ByteWriter): void {
  w.i32(rec.pid).i32(rec.tid);
}

/** PERF_RECORD_AUX_OUTPUT_HW_ID (21): u64 hw_id. */
export interface AuxOutputHwIdRecord extends KernelRecordHead {
  kind: 'aux_output_hw_id';
  hwId: bigint;
}
export function decodeAuxOutputHwId(r: ByteReader, h: RecordHead): AuxOutputHwIdRecord {
  return { kind: 'aux_output_hw_id', ...h, hwId: r.u64() };
}
export function encodeAuxOutputHwId(rec: AuxOutputHwIdRecord, w: ByteWriter): void {
  w.u64(rec.hwId);
}
