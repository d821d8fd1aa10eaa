/**
 * Which task perf attributes a queue's samples and errors to: the side band
 * (ITRACE_START, SWITCH / SWITCH_CPU_WIDE, COMM, FORK) read as perf 6.1's
 * intel-pt.c reads it.
 *
 * perf keeps the machine's current tid per CPU (machine__set_current_tid),
 * updated by ITRACE_START (per-CPU mmaps only) and by context switches
 * (intel_pt_context_switch: with have_sched_switch 3, a switch-out names the
 * next task in next_prev_pid/tid and a switch-in names the incoming one in its
 * sample id; otherwise only switch-ins count). Before each run of a queue's
 * decoder (intel_pt_set_pid_tid_cpu) the queue takes the CPU's current tid and
 * that thread's pid, and every sample and error of that run carries them. The
 * comm printed is the thread's as of when the sample is printed (the COMM
 * records processed so far): src/session's ThreadComms keeps it.
 *
 * perf's sync_switch (switches applied at the branch to `__switch_to`, enabled
 * when the kernel map has that symbol) is sync-switch.ts, on top of this.
 */
import { ThreadComms } from '../../session/threads.js';

/** A side-band record that moves tasks, with the fields perf reads from it. */
/** Every task event has its perf time and its record's file offset (records of one time keep file order). */
export type TaskEvent = { time: bigint; offset: number } & (
  | { kind: 'itrace_start'; cpu: number; pid: number; tid: number }
  | {
      kind: 'switch';
      cpu: number;
      out: boolean;
      cpuWide: boolean;
      /** The sample id's pid/tid: the task running when the record was written. */
      pid: number;
      tid: number;
      /** SWITCH_CPU_WIDE's next_prev_pid/tid (-1 for PERF_RECORD_SWITCH). */
      nextPrevPid: number;
      nextPrevTid: number;
    }
  | { kind: 'comm'; pid: number; tid: number; comm: string }
  | { kind: 'fork'; pid: number; tid: number; ppid: number; ptid: number }
);

export interface QueueTask {
  pid: number;
  tid: number;
}

export interface TaskOptions {
  /** AUXTRACE_INFO's HAVE_SCHED_SWITCH (3: context-switch records, CPU wide). */
  haveSchedSwitch: number;
  /** AUXTRACE_INFO's PER_CPU_MMAPS. */
  perCpuMmaps: boolean;
}

const NONE: QueueTask = { pid: -1, tid: -1 };

export class QueueTasks {
  readonly threads = new ThreadComms();
  /** machine->current_tid, per CPU (-1 when never set). */
  private readonly current = new Map<number, number>();
  /** ptq->pid / ptq->tid, per queue (keyed by CPU). */
  private readonly queue = new Map<number, QueueTask>();
  /** Moves whenever a queue's task or a thread's comm may have changed (formatters keep what they made till then). */
  changes = 0;

  constructor(readonly o: TaskOptions) {}

  /** intel_pt_process_event's part for tasks, after the queues were decoded up to the record's time. */
  apply(e: TaskEvent): void {
    this.changes++;
    switch (e.kind) {
      case 'itrace_start':
        if (this.o.perCpuMmaps) this.setCurrent(e.cpu, e.pid, e.tid);
        return;
      case 'switch':
        this.contextSwitch(e);
        return;
      case 'comm':
        this.threads.onComm(e.pid, e.tid, e.comm);
        return;
      case 'fork':
        this.threads.onFork(e.pid, e.tid, e.ppid, e.ptid);
        return;
    }
  }

  /** intel_pt_set_pid_tid_cpu: before each run of the queue's decoder. `queueTid`: the AUXTRACE buffers' tid. */
  beginRun(cpu: number, queueTid = -1): void {
    this.changes++;
    const was = this.queue.get(cpu) ?? NONE;
    let tid = was.tid;
    let pid = was.pid;
    if (queueTid === -1 || this.o.haveSchedSwitch) {
      tid = this.current.get(cpu) ?? -1;
      if (tid === -1) pid = -1;
    } else tid = queueTid;
    // machine__find_thread(-1, tid): when no thread has the tid, the queue keeps its last pid (as perf)
    const found = tid === -1 ? undefined : this.threads.pidOf(tid);
    if (found !== undefined) pid = found;
    // a new object only when the task changed (runs are many, one per timing point passed; holders of the
    // old object keep what it said)
    if (tid !== was.tid || pid !== was.pid || was === NONE) this.queue.set(cpu, { pid, tid });
  }

  /** The pid/tid the queue's samples and errors carry now. */
  task(cpu: number): QueueTask {
    return this.queue.get(cpu) ?? NONE;
  }

  /** The comm perf script prints for a sample of this queue now (machine__findnew_thread, thread__comm_str). */
  comm(t: QueueTask): string {
    return this.threads.comm(t.pid, t.tid);
  }

  private contextSwitch(e: Extract<TaskEvent, { kind: 'switch' }>): void {
    if (this.o.haveSchedSwitch === 3) {
      if (!e.out) {
        // intel_pt_context_switch_in: only if the current tid has not been updated yet
        if ((this.current.get(e.cpu) ?? -1) !== e.tid) this.setCurrent(e.cpu, e.pid, e.tid);
        return;
      }
      // perf refuses a per-thread SWITCH out here ("Expecting CPU-wide context switch event")
      if (!e.cpuWide) return;
      this.setCurrent(e.cpu, e.nextPrevPid, e.nextPrevTid);
      return;
    }
    if (e.out) return;
    this.setCurrent(e.cpu, e.pid, e.tid);
  }

  /** machine__set_current_tid. */
  setCurrent(cpu: number, pid: number, tid: number): void {
    if (cpu < 0) return;
    this.changes++;
    this.current.set(cpu, tid);
    this.threads.ensure(pid, tid);
  }
}
