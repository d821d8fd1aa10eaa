/**
 * The `errors` (and, on request, `branches`) tables of an intel_pt
 * recording: the flow decoder run over the code image and its pokes, as
 * `perfpoke decode --itrace=e` (or `b`) does, one row per reported event.
 */
import { decodeFlow } from '../intelpt/flow/decode.js';
import type { FlowSink } from '../intelpt/flow/cpu-flow.js';
import type { PtRecording } from '../intelpt/flow/recording.js';
import { tscToPerfTime } from '../intelpt/flow/time-conv.js';
import type { Row } from './schema.js';

export function ptRows(rec: PtRecording, withBranches: boolean): { errors: Row[]; branches: Row[] } {
  const tc = rec.timeConv;
  const time = (tsc: bigint): bigint | null => (tc ? tscToPerfTime(tsc, tc) : null);
  const errors: Row[] = [];
  const branches: Row[] = [];
  const sink: FlowSink = {
    error: (e) =>
      errors.push({
        cpu: e.cpu,
        time_ns: time(e.estTsc),
        tsc: e.tsc,
        ip: e.ip,
        code: e.code,
        message: e.message,
        reason: e.reason,
        trace_offset: e.offset,
      }),
  };
  if (withBranches)
    sink.branch = (cpu, from, to, kind, tsc) =>
      branches.push({ cpu, time_ns: time(tsc), from_ip: from, to_ip: to, kind });
  decodeFlow({
    cpus: rec.cpus,
    pokes: rec.pokes,
    code: rec.machine.image,
    timeConv: tc,
    retCompression: rec.retCompression,
    // as `perfpoke decode -i`: perf's time order of CPUs and its resync after unreadable code
    eventTimes: rec.eventTimes,
    errors: { afterUnreadableCode: 'forget-ip' },
    mtc: rec.mtc,
    sink,
  });
  return { errors, branches };
}
