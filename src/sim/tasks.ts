/**
 * Tasks for a simulated `perf record -a` recording: a few processes (one
 * with two threads, one thread never named by a COMM record), the idle task,
 * and per CPU a schedule of context switches. The trace itself does not
 * depend on the task (the simulated code is kernel code, the same for all);
 * what changes is the side band perf attributes samples and errors from:
 *
 * - COMM for each named thread at time 0 (perf record's synthesized ones),
 *   and one COMM with COMM_EXEC during the run (an exec renaming a task);
 * - ITRACE_START on each CPU when tracing starts, naming the task there;
 * - PERF_RECORD_SWITCH_CPU_WIDE pairs: out (misc SWITCH_OUT, written in the
 *   outgoing task, next_prev = the next task) then in (written in the next
 *   task, next_prev = the previous one), at random times: in a burst of
 *   kernel execution as well as between bursts.
 */
import type { ByteWriter } from '../io/byte-writer.js';
import {
  PERF_RECORD_MISC_COMM_EXEC,
  PERF_RECORD_MISC_SWITCH_OUT,
  PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
  RecordType,
} from '../abi/record-type.js';
import { Rng } from './rng.js';

export interface SimThread {
  pid: number;
  tid: number;
  /** undefined: no COMM record names it (perf prints ":tid"). */
  comm: string | undefined;
}

export interface SimSwitch {
  /** TSC of the switch-out record. */
  tsc: number;
  /** TSC of the switch-in record (default 2 ticks after the switch-out). */
  inTsc?: number;
  prev: SimThread;
  next: SimThread;
  preempt: boolean;
}

export interface TaskPlan {
  threads: SimThread[];
  perCpu: { cpu: number; first: SimThread; switches: SimSwitch[] }[];
  /** An exec: the thread takes a new comm at this TSC. */
  exec: { tsc: number; thread: SimThread; comm: string };
}

export const IDLE: SimThread = { pid: 0, tid: 0, comm: undefined };

export function planTasks(o: {
  seed: number;
  cpus: number;
  tasks: number;
  switchesPerCpu: number;
  startTsc: number;
  endTsc: number;
  /** Per CPU, the switches the code ran (executor.ts `switchAt`): their records' TSCs instead of random ones. */
  ran?: { out: number; in: number }[][];
}): TaskPlan {
  const rng = new Rng(o.seed ^ 0x7a5c);
  const threads: SimThread[] = [];
  for (let k = 0; k < o.tasks; k++) {
    const pid = 1000 + 10 * k;
    threads.push({ pid, tid: pid, comm: `worker-${k}` });
    if (k === 0) threads.push({ pid, tid: pid + 1, comm: `worker-${k}` });
  }
  // a thread perf has no COMM for: perf names it ":tid"
  threads.push({ pid: 4242, tid: 4243, comm: undefined });
  const runnable = [IDLE, ...threads];
  const span = o.endTsc - o.startTsc;
  const perCpu: TaskPlan['perCpu'] = [];
  for (let cpu = 0; cpu < o.cpus; cpu++) {
    const first = runnable[(cpu + 1) % runnable.length]!;
    let cur = first;
    const times: number[] = [];
    for (let i = 0; i < o.switchesPerCpu; i++) times.push(o.startTsc + 200 + rng.int(0, Math.max(1, span - 400)));
    times.sort((a, b) => a - b);
    const switches: SimSwitch[] = [];
    let last = -Infinity;
    const ran = o.ran?.[cpu];
    const at = ran ? ran.map((r) => ({ t: r.out, in: r.in & ~1 })) : times.map((t) => ({ t, in: undefined }));
    for (const { t, in: inTsc } of at) {
      const tsc = t & ~1; // even: its perf time converts back exactly
      if (tsc <= last + 8) continue;
      last = tsc;
      let next = rng.pick(runnable);
      if (next === cur) next = runnable[(runnable.indexOf(cur) + 1) % runnable.length]!;
      switches.push({ tsc, prev: cur, next, preempt: rng.chance(0.5), ...(inTsc === undefined ? {} : { inTsc }) });
      cur = next;
    }
    perCpu.push({ cpu, first, switches });
  }
  const renamed = threads[threads.length - 2] ?? threads[0]!;
  const exec = { tsc: (o.startTsc + Math.floor(span / 2)) & ~1, thread: renamed, comm: 'renamed-exec' };
  return { threads, perCpu, exec };
}

/** One record to write at a TSC (its perf time is passed to `body`). */
export interface TaskRecord {
  tsc: number;
  type: number;
  misc: number;
  /** The body before the sample_id trailer (a SAMPLE: the whole body). */
  body: (b: ByteWriter, time: bigint) => void;
  /** The trailer's task and CPU, and whether it is the intel_pt event's record (ITRACE_START); none for a SAMPLE. */
  sid?: { pid: number; tid: number; cpu: number; pt: boolean };
}

/** COMM records perf record synthesizes at the start (time 0): one per named thread. */
export function startComms(plan: TaskPlan): TaskRecord[] {
  return plan.threads
    .filter((t) => t.comm !== undefined)
    .map((t) => ({
      tsc: 0,
      type: RecordType.COMM,
      misc: 0,
      body: (b: ByteWriter) => {
        b.u32(t.pid).u32(t.tid).cstring(t.comm!, 8);
      },
      sid: { pid: t.pid, tid: t.tid, cpu: 0, pt: false },
    }));
}

/** ITRACE_START per CPU at `startTsc`, the switches, and the exec's COMM, each at its TSC. */
export function timedTaskRecords(plan: TaskPlan, startTsc: number): TaskRecord[] {
  const out: TaskRecord[] = [];
  for (const c of plan.perCpu) {
    out.push({
      tsc: startTsc,
      type: RecordType.ITRACE_START,
      misc: 0,
      body: (b) => {
        b.u32(c.first.pid).u32(c.first.tid);
      },
      sid: { pid: c.first.pid, tid: c.first.tid, cpu: c.cpu, pt: true },
    });
    for (const s of c.switches) {
      out.push({
        tsc: s.tsc,
        type: RecordType.SWITCH_CPU_WIDE,
        misc: PERF_RECORD_MISC_SWITCH_OUT | (s.preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0),
        body: (b) => {
          b.u32(s.next.pid).u32(s.next.tid);
        },
        sid: { pid: s.prev.pid, tid: s.prev.tid, cpu: c.cpu, pt: false },
      });
      out.push({
        tsc: s.inTsc ?? s.tsc + 2,
        type: RecordType.SWITCH_CPU_WIDE,
        misc: 0,
        body: (b) => {
          b.u32(s.prev.pid).u32(s.prev.tid);
        },
        sid: { pid: s.next.pid, tid: s.next.tid, cpu: c.cpu, pt: false },
      });
    }
  }
  const e = plan.exec;
  out.push({
    tsc: e.tsc,
    type: RecordType.COMM,
    misc: PERF_RECORD_MISC_COMM_EXEC,
    body: (b) => {
      b.u32(e.thread.pid).u32(e.thread.tid).cstring(e.comm, 8);
    },
    sid: { pid: e.thread.pid, tid: e.thread.tid, cpu: 0, pt: false },
  });
  return out.sort((a, b) => a.tsc - b.tsc);
}
