import {
  PERF_AUX_FLAG_TRUNCATED,
  PERF_AUX_FLAG_OVERWRITE,
  PERF_AUX_FLAG_PARTIAL,
  PERF_AUX_FLAG_COLLISION,
} from '../abi/record-type.js';

/**
 * AUXTRACE buffers grouped into per-CPU (or, for per-thread mmaps, per-thread)
 * queues in offset order — perf's auxtrace_queues (util/auxtrace.c): with
 * per-CPU mmaps the queue is the CPU, else the thread (cpu -1). Each buffer
 * remembers where its data sits in the file so a decoder can read it lazily.
 * AUX records (flags: truncated, overwrite, partial, collision) and
 * ITRACE_START are kept per queue for the flow decoder's reports.
 */
export interface AuxBuffer {
  /** Offset of the data inside the AUX area (AUXTRACE.offset). */
  offset: bigint;
  size: number;
  reference: bigint;
  idx: number;
  tid: number;
  cpu: number;
  /** File offset of the data (after the AUXTRACE record header), when known. */
  fileOffset?: number;
  /** The data itself, when the caller kept it. */
  data?: Uint8Array;
}

export interface AuxFlagEvent {
  time?: bigint;
  auxOffset: bigint;
  auxSize: bigint;
  flags: bigint;
  truncated: boolean;
  overwrite: boolean;
  partial: boolean;
  collision: boolean;
}

export interface ItraceStart {
  pid: number;
  tid: number;
  time?: bigint;
}

export interface AuxQueue {
  /** 'cpu:N' or 'tid:N' */
  key: string;
  cpu: number;
  tid: number;
  buffers: AuxBuffer[];
  auxEvents: AuxFlagEvent[];
  itraceStarts: ItraceStart[];
}

export function auxFlags(flags: bigint): Pick<AuxFlagEvent, 'truncated' | 'overwrite' | 'partial' | 'collision'> {
  const f = Number(flags & 0xffn);
  return {
    truncated: !!(f & PERF_AUX_FLAG_TRUNCATED),
    overwrite: !!(f & PERF_AUX_FLAG_OVERWRITE),
    partial: !!(f & PERF_AUX_FLAG_PARTIAL),
    collision: !!(f & PERF_AUX_FLAG_COLLISION),
  };
}

export class AuxQueues {
  private readonly byKey = new Map<string, AuxQueue>();

  /** perCpu: AUXTRACE_INFO's PER_CPU_MMAPS (queues by CPU); otherwise by thread. */
  constructor(readonly perCpu = true) {}

  private keyOf(cpu: number, tid: number): [string, number, number] {
    return this.perCpu && cpu >= 0 ? [`cpu:${cpu}`, cpu, -1] : [`tid:${tid}`, -1, tid];
  }

  queue(cpu: number, tid: number): AuxQueue {
    const [key, c, t] = this.keyOf(cpu, tid);
    let q = this.byKey.get(key);
    if (!q) this.byKey.set(key, (q = { key, cpu: c, tid: t, buffers: [], auxEvents: [], itraceStarts: [] }));
    return q;
  }

  /** Adds one AUXTRACE buffer; buffers are kept sorted by AUX offset. */
  addBuffer(b: AuxBuffer): void {
    const q = this.queue(b.cpu, b.tid);
    const list = q.buffers;
    let i = list.length;
    while (i > 0 && list[i - 1]!.offset > b.offset) i--;
    list.splice(i, 0, b);
  }

  /** Records a PERF_RECORD_AUX for the queue of (cpu, tid). */
  addAux(cpu: number, tid: number, e: { auxOffset: bigint; auxSize: bigint; flags: bigint; time?: bigint }): void {
    this.queue(cpu, tid).auxEvents.push({ ...e, ...auxFlags(e.flags) });
  }

  addItraceStart(cpu: number, s: ItraceStart): void {
    this.queue(cpu, s.tid).itraceStarts.push(s);
  }

  /** Queues ordered by CPU, then thread. */
  all(): AuxQueue[] {
    return [...this.byKey.values()].sort((a, b) => a.cpu - b.cpu || a.tid - b.tid);
  }
}
