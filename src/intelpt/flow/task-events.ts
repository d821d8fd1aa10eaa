/**
 * The side-band records that move tasks, as QueueTasks needs them: read from
 * a record of the file (its body and its sample_id trailer).
 */
import {
  PERF_RECORD_MISC_CPUMODE_MASK,
  PERF_RECORD_MISC_GUEST_KERNEL,
  PERF_RECORD_MISC_KERNEL,
  PERF_RECORD_MISC_SWITCH_OUT,
  RecordType,
} from '../../abi/record-type.js';
import type { RawRecord } from '../../perfdata/raw-record.js';
import type { TaskEvent } from './queue-tasks.js';

const WANTED = new Set<number>([
  RecordType.ITRACE_START,
  RecordType.SWITCH,
  RecordType.SWITCH_CPU_WIDE,
  RecordType.COMM,
  RecordType.FORK,
]);

/** The task event a record holds, or undefined for any other record. */
export function taskEventOf(raw: RawRecord): TaskEvent | undefined {
  if (!WANTED.has(raw.type)) return undefined;
  const r = raw.decode();
  const sid = 'sampleId' in r ? r.sampleId : undefined;
  const time = sid?.time ?? 0n;
  const cpu = sid?.cpu ?? -1;
  const offset = raw.fileOffset;
  switch (r.kind) {
    case 'itrace_start':
      return { kind: 'itrace_start', time, offset, cpu, pid: r.pid, tid: r.tid };
    case 'switch':
    case 'switch_cpu_wide':
      return {
        kind: 'switch',
        time,
        offset,
        cpu,
        out: (r.misc & PERF_RECORD_MISC_SWITCH_OUT) !== 0,
        cpuWide: r.kind === 'switch_cpu_wide',
        pid: sid?.pid ?? -1,
        tid: sid?.tid ?? -1,
        nextPrevPid: r.kind === 'switch_cpu_wide' ? r.nextPrevPid : -1,
        nextPrevTid: r.kind === 'switch_cpu_wide' ? r.nextPrevTid : -1,
      };
    case 'comm':
      return { kind: 'comm', time, offset, pid: r.pid, tid: r.tid, comm: r.comm };
    case 'fork':
      return { kind: 'fork', time, offset, pid: r.pid, tid: r.tid, ppid: r.ppid, ptid: r.ptid };
    default:
      return undefined;
  }
}

/** A sample of another event than intel_pt, which perf script prints among the synthesized ones. */
export interface OtherSample {
  time: bigint;
  offset: number;
  cpu: number;
  pid: number;
  tid: number;
  ip: bigint;
  period: bigint;
  /** Index of its attr in the file. */
  attrIndex: number;
  /** header.misc's cpumode says kernel. */
  kernel: boolean;
  callchain: boolean;
}

/** The sample a SAMPLE record holds (its attr resolved by the caller). */
export function otherSampleOf(raw: RawRecord, attrIndex: number, samplePeriod: bigint): OtherSample {
  const r = raw.decode();
  if (r.kind !== 'sample') throw new Error('not a SAMPLE record');
  const cpumode = raw.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  return {
    time: r.time ?? 0n,
    offset: raw.fileOffset,
    cpu: r.cpu ?? -1,
    pid: r.pid ?? -1,
    tid: r.tid ?? -1,
    ip: r.ip ?? 0n,
    period: r.period ?? samplePeriod,
    attrIndex,
    kernel: cpumode === PERF_RECORD_MISC_KERNEL || cpumode === PERF_RECORD_MISC_GUEST_KERNEL,
    callchain: r.callchain !== undefined,
  };
}
