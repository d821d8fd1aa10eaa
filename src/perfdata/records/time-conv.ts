import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/**
 * PERF_RECORD_TIME_CONV (79): u64 time_shift, time_mult, time_zero; then (Linux 5.10+ perf,
 * when header.size says so) u64 time_cycles, time_mask; u8 cap_user_time_zero, cap_user_time_short; u8 reserved[6].
 */
export interface TimeConvRecord extends RecordHead {
  kind: 'time_conv';
  timeShift: bigint;
  timeMult: bigint;
  timeZero: bigint;
  timeCycles?: bigint;
  timeMask?: bigint;
  capUserTimeZero?: number;
  capUserTimeShort?: number;
}
export function decodeTimeConv(r: ByteReader, h: RecordHead): TimeConvRecord {
  const rec: TimeConvRecord = { kind: 'time_conv', ...h, timeShift: r.u64(), timeMult: r.u64(), timeZero: r.u64() };
  if (r.remaining >= 24) {
    rec.timeCycles = r.u64();
    rec.timeMask = r.u64();
    rec.capUserTimeZero = r.u8();
    rec.capUserTimeShort = r.u8();
    r.skip(6);
  }
  return rec;
}
export function encodeTimeConv(rec: TimeConvRecord, w: ByteWriter): void {
  w.u64(rec.timeShift).u64(rec.timeMult).u64(rec.timeZero);
  if (rec.timeCycles !== undefined)
    w.u64(rec.timeCycles)
      .u64(rec.timeMask ?? 0n)
      .u8(rec.capUserTimeZero ?? 0)
      .u8(rec.capUserTimeShort ?? 0)
      .zeros(6);
}
