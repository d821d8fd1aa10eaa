/**
 * Where the fixed u64 fields that open a PERF_RECORD_SAMPLE sit, for the
 * fast printers that read them straight from the record bytes (script-fast,
 * perf-dump-fast): the uapi order IDENTIFIER, IP, TID, TIME, ADDR, ID,
 * STREAM_ID, CPU, PERIOD after the 8-byte header.
 */
import { SampleType } from '../abi/sample-format.js';

/** The fields fixedSampleOffsets places. */
export const FIXED_SAMPLE_FIELDS =
  SampleType.IDENTIFIER |
  SampleType.IP |
  SampleType.TID |
  SampleType.TIME |
  SampleType.ADDR |
  SampleType.ID |
  SampleType.STREAM_ID |
  SampleType.CPU |
  SampleType.PERIOD;

/** Offsets from the record start, -1 for a field the sample type lacks; `end`: the offset after them. */
export interface FixedSampleOffsets {
  ip: number;
  tid: number;
  time: number;
  addr: number;
  cpu: number;
  period: number;
  end: number;
}

export function fixedSampleOffsets(sampleType: bigint): FixedSampleOffsets {
  let off = 8;
  const at = (bit: bigint): number => {
    if ((sampleType & bit) === 0n) return -1;
    off += 8;
    return off - 8;
  };
  at(SampleType.IDENTIFIER);
  const ip = at(SampleType.IP);
  const tid = at(SampleType.TID);
  const time = at(SampleType.TIME);
  const addr = at(SampleType.ADDR);
  at(SampleType.ID);
  at(SampleType.STREAM_ID);
  const cpu = at(SampleType.CPU);
  const period = at(SampleType.PERIOD);
  return { ip, tid, time, addr, cpu, period, end: off };
}
