/**
 * The side-band records that move tasks, as QueueTasks needs them: read from
 * a record of the file (its body and its sample_id trailer).
 */
import { PERF_RECORD_MISC_SWITCH_OUT, RecordType } from '../../abi/record-type.js';
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
  switch (r.kind) {
    case 'itrace_start':
      return { kind: 'itrace_start', time, cpu, pid: r.pid, tid: r.tid };
    case 'switch':
    case 'switch_cpu_wide':
      return {
        kind: 'switch',
        time,
        cpu,
        out: (r.misc & PERF_RECORD_MISC_SWITCH_OUT) !== 0,
        cpuWide: r.kind === 'switch_cpu_wide',
        pid: sid?.pid ?? -1,
        tid: sid?.tid ?? -1,
        nextPrevPid: r.kind === 'switch_cpu_wide' ? r.nextPrevPid : -1,
        nextPrevTid: r.kind === 'switch_cpu_wide' ? r.nextPrevTid : -1,
      };
    case 'comm':
      return { kind: 'comm', time, pid: r.pid, tid: r.tid, comm: r.comm };
    case 'fork':
      return { kind: 'fork', time, pid: r.pid, tid: r.tid, ppid: r.ppid, ptid: r.ptid };
    default:
      return undefined;
  }
}
