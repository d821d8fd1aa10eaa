/**
 * perf's order of decoding when the trace is timed (intel-pt.c
 * intel_pt_setup_queue, intel_pt_process_queues, auxtrace.c's heap): every
 * CPU's queue sits on a min-heap keyed by its current timestamp; the queue
 * with the lowest is decoded until its time passes the next queue's (or the
 * time of the side-band event being processed), then goes back on the heap.
 * So the output of all CPUs comes out merged in time order, with perf's tie
 * breaks, and each TEXT_POKE takes effect once every queue has reached its
 * time (poke-schedule.ts says why that is the first timing point at or after it).
 *
 * Before a queue goes on the heap perf decodes it to its first timestamp and
 * drops what it decoded on the way (samples and errors alike): `mute` is told
 * which CPU is in that phase.
 */
import type { BlockCache } from '../../x86/block-cache.js';
import type { CpuFlow } from './cpu-flow.js';
import { NO_STOP } from './flow-sync.js';
import type { FlowPoke, ImageClock } from './poke-schedule.js';
import { perfTimeToTsc, type PtTimeConv } from './time-conv.js';
import type { QueueTasks, TaskEvent } from './queue-tasks.js';
import type { SyncSwitch } from './sync-switch.js';

interface HeapItem {
  q: number;
  ord: bigint;
}

/** auxtrace.c's auxtrace_heap: insertion and pop exactly as perf does them, which decides ties. */
export class AuxHeap {
  readonly items: HeapItem[] = [];

  add(q: number, ord: bigint): void {
    this.items.push({ q, ord });
    this.heapify(this.items.length - 1, q, ord);
  }

  pop(): void {
    const a = this.items;
    const cnt = a.length; // perf's local heap_cnt: the count before the pop
    if (!cnt) return;
    let pos = 0;
    for (;;) {
      const left = (pos << 1) + 1;
      if (left >= cnt) break;
      const right = left + 1;
      if (right >= cnt) {
        a[pos] = a[left]!;
        a.length = cnt - 1;
        return;
      }
      if (a[left]!.ord < a[right]!.ord) {
        a[pos] = a[left]!;
        pos = left;
      } else {
        a[pos] = a[right]!;
        pos = right;
      }
    }
    const last = a[cnt - 1]!;
    this.heapify(pos, last.q, last.ord);
    a.length = cnt - 1;
  }

  private heapify(start: number, q: number, ord: bigint): void {
    const a = this.items;
    let pos = start;
    while (pos) {
      const parent = (pos - 1) >> 1;
      if (a[parent]!.ord <= ord) break;
      a[pos] = a[parent]!;
      pos = parent;
    }
    a[pos] = { q, ord };
  }
}

/** A side-band record's time (perf time); pokes and task moves are applied when their record is processed. */
export interface OrderEvent {
  time: bigint;
  /** File offset of the record, for records of one time (-1: a processing point only). */
  offset: number;
  poke?: FlowPoke;
  task?: TaskEvent;
  /** A record handed on after the queues were decoded up to its time (another event's sample). */
  deliver?: () => void;
}

const MAX_TSC = NO_STOP;

/**
 * Decode all queues in perf's time order, processing `events` (sorted by
 * time: every side-band record with a time, pokes among them) as perf does.
 */
export function runTimeOrdered(
  flows: readonly CpuFlow[],
  events: readonly OrderEvent[],
  cache: BlockCache,
  clock: ImageClock,
  tc: PtTimeConv,
  mute: (cpu: number | undefined) => void,
  tasks?: QueueTasks,
  sync?: SyncSwitch,
): void {
  const heap = new AuxHeap();
  /** Queues sync_switch took off the heap. */
  const waiting = new Set<number>();
  let setUp = false;
  const setup = (): void => {
    setUp = true;
    flows.forEach((f, i) => {
      mute(f.cpu);
      // perf: decode until the first state with a timestamp; a queue without one is never decoded
      const ended = f.run(1n);
      mute(undefined);
      const t = f.pausedTsc();
      if (!ended && t !== undefined) heap.add(i, t);
    });
  };
  const process = (ts: bigint): void => {
    while (heap.items.length) {
      const top = heap.items[0]!;
      if (top.ord >= ts) return;
      heap.pop();
      // run it until its time passes the next queue's (perf: that queue's timestamp + 1), at most to ts
      const next = heap.items[0];
      const stop = next === undefined ? ts : minBig(next.ord + 1n, ts);
      const f = flows[top.q]!;
      tasks?.beginRun(f.cpu);
      sync?.beginRun();
      if (f.run(minBig(stop, NO_STOP))) continue;
      if (f.switchPause) {
        // sync_switch: off the heap until its switch-out record (intel_pt_sample returned 1)
        f.switchPause = false;
        waiting.add(top.q);
        continue;
      }
      heap.add(top.q, f.pausedTsc() ?? stop);
    }
  };
  for (const e of events) {
    // perf decodes up to a record's time only when it has one (intel_pt_process_event: time 0 is none)
    const tsc = e.time ? perfTimeToTsc(e.time, tc) : 0n;
    if (tsc) {
      if (!setUp) setup();
      process(tsc);
    }
    if (e.task && sync) {
      const at = sync.apply(e.task, tsc);
      const cpu = e.task.kind === 'switch' ? e.task.cpu : -1;
      const q = at === undefined ? -1 : flows.findIndex((f) => f.cpu === cpu);
      if (at !== undefined && waiting.delete(q)) heap.add(q, at);
    } else if (e.task) tasks?.apply(e.task);
    e.deliver?.();
    if (tsc && e.poke) {
      clock.time = e.poke.time;
      cache.invalidate(e.poke.addr, e.poke.addr + BigInt(Math.max(1, e.poke.len)));
    }
  }
  if (!setUp) setup();
  process(MAX_TSC);
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
