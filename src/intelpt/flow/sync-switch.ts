/**
 * perf 6.1's sync_switch (intel-pt.c): when the side band cannot say exactly
 * where in the trace a CPU changed task, perf moves the CPU to the next task at
 * the branch to the kernel's `__switch_to`, found in the kernel map.
 *
 * It is enabled at the first run of a queue's decoder (intel_pt_run_decoder)
 * when the mmaps are per CPU, HAVE_SCHED_SWITCH is 1 or 3, the trace is timed,
 * the kernel is traced and the kernel map has `__switch_to` (switchIps). Each
 * queue then follows a switch_state, moved by the branches its decoder reports
 * (intel_pt_sample, after the branch's samples) and by the context-switch
 * records (intel_pt_sync_switch, intel_pt_context_switch_in):
 *
 *   NOT_TRACING            after a trace end; a switch record applies at once
 *   UNKNOWN                tracing, not known to be in the switch path
 *   TRACING                in the switch path (a call to `__perf_event_task_sched_out`,
 *                          or `perf_trace_sched_switch` with sched_switch tracepoints)
 *   EXPECTING_SWITCH_IP    a switch-out record named the next task: it takes the CPU at the
 *                          branch to `__switch_to` (intel_pt_next_tid)
 *   EXPECTING_SWITCH_EVENT the branch to `__switch_to` came first: the queue leaves the heap until
 *                          the switch-out record, which puts it back at its time with the next task
 *
 * An error in kernel code turns sync_switch off for that queue (applying a
 * pending next task first).
 */
import type { QueueTasks, TaskEvent } from './queue-tasks.js';
import { BranchKind, type FlowSink } from './flow-types.js';

export enum SwitchState {
  NotTracing,
  Unknown,
  Tracing,
  ExpectingSwitchEvent,
  ExpectingSwitchIp,
}

/** intel_pt_switch_ip's result: the address of `__switch_to` and of the function perf takes as the switch path. */
export interface SwitchIps {
  switchIp: bigint;
  /** `__perf_event_task_sched_out` (or `perf_trace_sched_switch` with HAVE_SCHED_SWITCH 1); 0 when absent. */
  ptssIp: bigint;
}

/**
 * intel_pt_run_decoder's conditions and intel_pt_switch_ip: the ips when perf decodes with sync_switch,
 * else undefined. `symbol` finds a kernel-map symbol's start by name.
 */
export function switchIps(o: {
  perCpuMmaps: boolean;
  haveSchedSwitch: number;
  timed: boolean;
  kernelTraced: boolean;
  symbol: (name: string) => bigint | undefined;
}): SwitchIps | undefined {
  if (!o.perCpuMmaps || (o.haveSchedSwitch !== 1 && o.haveSchedSwitch !== 3) || !o.timed || !o.kernelTraced)
    return undefined;
  const switchIp = o.symbol('__switch_to');
  if (switchIp === undefined) return undefined;
  const ptss = o.haveSchedSwitch === 1 ? 'perf_trace_sched_switch' : '__perf_event_task_sched_out';
  return { switchIp, ptssIp: o.symbol(ptss) ?? 0n };
}

interface QueueSwitch {
  /** ptq->sync_switch. */
  on: boolean;
  state: SwitchState;
  /** ptq->next_tid (-1: none). */
  nextTid: number;
}

/** What a queue's decoder needs for sync_switch (CpuFlow has it). */
export interface SwitchQueue {
  readonly cpu: number;
  switchPause: boolean;
  setQueueTime(tsc: bigint): void;
  estimatedTsc(): bigint;
}

export class SyncSwitch {
  /** pt->sync_switch: set at the first run of a decoder. */
  private enabled = false;
  private readonly queues = new Map<number, QueueSwitch>();
  private readonly flows = new Map<number, SwitchQueue>();

  constructor(
    private readonly ips: SwitchIps,
    private readonly tasks: QueueTasks,
    private readonly haveSchedSwitch: number,
    /** perf's kernel_start: errors at or above it turn sync_switch off for the queue. */
    private readonly kernelStart: bigint,
    /** The printing sink, told when perf sets a queue's timestamp. */
    private readonly sink: FlowSink,
  ) {}

  /** perf sets ptq->timestamp: the decoder's queue time and the time its samples print. */
  private setQueueTime(cpu: number, tsc: bigint): void {
    this.flows.get(cpu)?.setQueueTime(tsc);
    this.sink.queueTime?.(cpu, tsc);
  }

  /** Register a queue (intel_pt_alloc_queue: switch_state NOT_TRACING, next_tid -1). */
  add(flow: SwitchQueue): void {
    this.flows.set(flow.cpu, flow);
    this.queues.set(flow.cpu, { on: false, state: SwitchState.NotTracing, nextTid: -1 });
  }

  /** intel_pt_run_decoder's first call: intel_pt_enable_sync_switch. */
  beginRun(): void {
    if (this.enabled) return;
    this.enabled = true;
    for (const q of this.queues.values()) q.on = true;
  }

  /** The queue's state (tests, docs). */
  state(cpu: number): SwitchState | undefined {
    return this.queues.get(cpu)?.state;
  }

  /**
   * intel_pt_sample's end: a branch the decoder reported (its samples printed). It may move the CPU to its
   * next task, or ask the decoder to stop there (flow.switchPause) until the switch-out record comes.
   */
  onBranch(cpu: number, to: bigint, kind: string, op: string | undefined): void {
    const q = this.queues.get(cpu);
    if (!q?.on) return;
    const flow = this.flows.get(cpu)!;
    if (this.isSwitchIp(to, kind)) {
      switch (q.state) {
        case SwitchState.NotTracing:
        case SwitchState.Unknown:
        case SwitchState.ExpectingSwitchIp:
          // intel_pt_run_decoder, before this sample: "Use estimated TSC in unknown switch state"
          if (q.state === SwitchState.Unknown && q.nextTid === -1) this.setQueueTime(cpu, flow.estimatedTsc());
          this.nextTid(cpu, q);
          q.state = SwitchState.Tracing;
          return;
        default:
          q.state = SwitchState.ExpectingSwitchEvent;
          flow.switchPause = true;
          return;
      }
    }
    if (to === 0n) q.state = SwitchState.NotTracing;
    else if (q.state === SwitchState.NotTracing) q.state = SwitchState.Unknown;
    else if (q.state === SwitchState.Unknown && to === this.ips.ptssIp && isCall(kind, op))
      q.state = SwitchState.Tracing;
  }

  /** intel_pt_run_decoder on an error, before its sample: an error in the kernel turns sync_switch off. */
  onError(cpu: number, fromIp: bigint): void {
    const q = this.queues.get(cpu);
    if (!q?.on || fromIp < this.kernelStart) return;
    q.on = false;
    this.nextTid(cpu, q);
  }

  /**
   * intel_pt_context_switch with sync_switch: apply a task event. Returns the TSC to put the CPU's queue
   * back on the heap at (it waited for this switch-out record; its queue time is set), else undefined.
   */
  apply(e: TaskEvent, tsc: bigint): bigint | undefined {
    if (e.kind !== 'switch') {
      this.tasks.apply(e);
      return undefined;
    }
    if (this.haveSchedSwitch === 3) {
      if (!e.out) {
        this.switchIn(e.cpu);
        this.tasks.apply(e);
        return undefined;
      }
      // a per-thread switch-out is refused by perf ("Expecting CPU-wide context switch event")
      if (!e.cpuWide) return undefined;
      const r = this.syncSwitch(e.cpu, e.nextPrevTid, tsc);
      if (r.apply) this.tasks.apply(e);
      return r.requeue;
    }
    if (e.out) return undefined;
    const r = this.syncSwitch(e.cpu, e.tid, tsc);
    if (r.apply) this.tasks.apply(e);
    return r.requeue;
  }

  /** intel_pt_sync_switch: apply = perf goes on to machine__set_current_tid. */
  private syncSwitch(cpu: number, tid: number, tsc: bigint): { apply: boolean; requeue?: bigint } {
    const q = this.enabled ? this.queues.get(cpu) : undefined;
    if (!q?.on) return { apply: true };
    let requeue: bigint | undefined;
    switch (q.state) {
      case SwitchState.Unknown:
      case SwitchState.Tracing:
        q.nextTid = tid;
        q.state = SwitchState.ExpectingSwitchIp;
        return { apply: false };
      case SwitchState.ExpectingSwitchEvent:
        requeue = tsc;
        this.setQueueTime(cpu, tsc);
        q.state = SwitchState.Tracing;
        break;
      default:
        // NOT_TRACING; EXPECTING_SWITCH_IP ("ERROR: cpu %d expecting switch ip")
        break;
    }
    q.nextTid = -1;
    return requeue === undefined ? { apply: true } : { apply: true, requeue };
  }

  /** intel_pt_context_switch_in's sync_switch part. */
  private switchIn(cpu: number): void {
    const q = this.enabled ? this.queues.get(cpu) : undefined;
    if (!q?.on) return;
    q.nextTid = -1;
    if (q.state === SwitchState.ExpectingSwitchEvent || q.state === SwitchState.ExpectingSwitchIp)
      q.state = SwitchState.Tracing;
  }

  /** intel_pt_next_tid: the CPU runs the next task from here (machine__set_current_tid with pid -1). */
  private nextTid(cpu: number, q: QueueSwitch): void {
    if (q.nextTid === -1) return;
    this.tasks.setCurrent(cpu, -1, q.nextTid);
    this.tasks.beginRun(cpu);
    q.nextTid = -1;
  }

  /** intel_pt_is_switch_ip: a branch (not conditional, asynchronous or an interrupt) to `__switch_to`. */
  private isSwitchIp(to: bigint, kind: string): boolean {
    return to === this.ips.switchIp && kind !== BranchKind.cond && kind !== BranchKind.async;
  }
}

/** PERF_IP_FLAG_CALL: direct and indirect calls (the branch's instruction class), not syscalls. */
function isCall(kind: string, op: string | undefined): boolean {
  return kind === BranchKind.call || op === 'call';
}
