/**
 * The per-thread command names perf keeps while it walks a file in time order
 * (tools/perf/util/machine.c machine__findnew_thread / process_comm_event /
 * process_fork_event, thread.c thread__new / thread__fork). Only the comm is
 * tracked: that is what `perf script` prints in its first column. Kernel maps
 * and symbols belong to src/machine.
 */

interface ThreadState {
  pid: number;
  comm: string;
  /** perf's thread->comm_set: a real name was given (COMM record, idle thread), not the ":tid" placeholder. */
  commSet: boolean;
}

export class ThreadComms {
  private readonly byTid = new Map<number, ThreadState>();

  constructor() {
    // perf_session__register_idle_thread: tid 0 is "swapper" from the start
    this.byTid.set(0, { pid: 0, comm: 'swapper', commSet: true });
  }

  /** machine__findnew_thread: a thread never seen is named ":<tid>". */
  private findNew(pid: number, tid: number): ThreadState {
    let t = this.byTid.get(tid);
    if (!t) {
      t = { pid, comm: `:${tid}`, commSet: false };
      this.byTid.set(tid, t);
    } else if (t.pid === -1 && pid !== -1) {
      t.pid = pid; // machine__update_thread_pid
    }
    return t;
  }

  /** machine__findnew_thread for its side effects: the thread exists afterwards (machine__set_current_tid). */
  ensure(pid: number, tid: number): void {
    this.findNew(pid, tid);
  }

  /** machine__find_thread(-1, tid)'s pid: the thread's pid, undefined when no thread has that tid. */
  pidOf(tid: number): number | undefined {
    return this.byTid.get(tid)?.pid;
  }

  /** The name perf prints for a thread (creating it as perf does). */
  comm(pid: number, tid: number): string {
    return this.findNew(pid, tid).comm;
  }

  /** PERF_RECORD_COMM: the thread takes the new name. */
  onComm(pid: number, tid: number, comm: string): void {
    const t = this.findNew(pid, tid);
    t.comm = comm;
    t.commSet = true;
  }

  /**
   * PERF_RECORD_FORK: any thread already under the child's tid is dropped (a
   * missed EXIT), the child starts fresh and inherits the parent's name if the
   * parent has a real one (thread__fork).
   */
  onFork(pid: number, tid: number, ppid: number, ptid: number): void {
    let parent = this.findNew(ppid, ptid);
    if (parent.pid !== ppid && ppid !== -1) {
      // "removing erroneous parent thread": the tid was reused by another process
      this.byTid.delete(ptid);
      parent = this.findNew(ppid, ptid);
    }
    this.byTid.delete(tid);
    const child = this.findNew(pid, tid);
    if (parent.commSet) {
      child.comm = parent.comm;
      child.commSet = true;
    }
  }
}
