import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_SWITCH (14): no body; misc SWITCH_OUT / SWITCH_OUT_PREEMPT say which. */
export interface SwitchRecord extends KernelRecordHead {
  kind: 'switch';
}
export function decodeSwitch(_r: ByteReader, h: RecordHead): SwitchRecord {
  return { kind: 'switch', ...h };
}
export function encodeSwitch(_rec: SwitchRecord, _w: ByteWriter): void {}

/** PERF_RECORD_SWITCH_CPU_WIDE (15): u32 next_prev_pid, next_prev_tid. */
export interface SwitchCpuWideRecord extends KernelRecordHead {
  kind: 'switch_cpu_wide';
  nextPrevPid: number;
  nextPrevTid: number;
}
export function decodeSwitchCpuWide(r: ByteReader, h: RecordHead): SwitchCpuWideRecord {
  return { kind: 'switch_cpu_wide', ...h, nextPrevPid: r.i32(), nextPrevTid: r.i32() };
}
export function encodeSwitchCpuWide(rec: SwitchCpuWideRecord, w: ByteWriter): void {
  w.i32(rec.nextPrevPid).i32(rec.nextPrevTid);
}
