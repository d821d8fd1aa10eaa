import {
  PERF_AUX_FLAG_TRUNCATED,
  PERF_AUX_FLAG_OVERWRITE,
  PERF_AUX_FLAG_PARTIAL,
  PERF_AUX_FLAG_COLLISION,
} from '../abi/record-type.js';
import { decodeAuxtracePriv, type AuxtraceInfo } from './auxtrace-info.js';

/**
 * AUXTRACE buffers grouped into per-CPU (or, for per-thread mmaps, per-thread)
 * queues in offset order, after perf's auxtrace_queues (util/auxtrace.c, which
 * queues by the AUXTRACE record's mmap index): with per-CPU mmaps the queue is
 * the CPU, else the thread (cpu -1). Each buffer remembers where its data sits
 * in the file so a decoder can read it lazily (the flow decoder does:
 * src/intelpt/flow/recording.ts). AUX records (flags: truncated, overwrite,
 * partial, collision) and ITRACE_START are kept per queue for reports about
 * the trace (loadAuxQueues; the flow decoder does not use them).
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
    if (!q) {
      q = { key, cpu: c, tid: t, buffers: [], auxEvents: [], itraceStarts: [] };
      this.byKey.set(key, q);
    }
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

/** What loadAuxQueues needs of a perf.data reader (src/perfdata PerfFile satisfies it). */
export interface AuxRecordSource {
  records(): AsyncIterable<{
    type: number;
    size: number;
    fileOffset: number;
    auxData?: Uint8Array;
    decode(): unknown;
  }>;
}

const AUX = 11;
const ITRACE_START = 12;
const AUXTRACE_INFO = 70;
const AUXTRACE = 71;

/**
 * Reads a file's AUXTRACE_INFO, AUXTRACE, AUX and ITRACE_START records into
 * queues (perf's auxtrace_queues__add_event). PER_CPU_MMAPS from the intel_pt
 * AUXTRACE_INFO decides CPU vs thread queues (CPU when there is none).
 * With `keepData`, each buffer keeps a copy of its bytes; otherwise only its
 * file offset (the data follows the 48-byte AUXTRACE record).
 */
export async function loadAuxQueues(
  src: AuxRecordSource,
  opts: { keepData?: boolean } = {},
): Promise<{ queues: AuxQueues; info?: AuxtraceInfo }> {
  let info: AuxtraceInfo | undefined;
  let queues: AuxQueues | undefined;
  const pendingAux: {
    cpu: number;
    tid: number;
    e: { auxOffset: bigint; auxSize: bigint; flags: bigint; time?: bigint };
  }[] = [];
  const pendingStarts: { cpu: number; s: ItraceStart }[] = [];
  const q = (): AuxQueues => (queues ??= new AuxQueues(info?.type === 'intel_pt' ? info.perCpuMmaps : true));
  for await (const r of src.records()) {
    if (r.type === AUXTRACE_INFO) {
      const rec = r.decode() as { auxType: number; priv: bigint[] };
      info = decodeAuxtracePriv(rec.auxType, rec.priv, r.fileOffset);
    } else if (r.type === AUXTRACE) {
      const rec = r.decode() as { offset: bigint; reference: bigint; idx: number; tid: number; cpu: number };
      const data = r.auxData;
      q().addBuffer({
        offset: rec.offset,
        size: data?.length ?? 0,
        reference: rec.reference,
        idx: rec.idx,
        tid: rec.tid,
        cpu: rec.cpu,
        fileOffset: r.fileOffset + r.size,
        ...(opts.keepData && data ? { data: data.slice() } : {}),
      });
    } else if (r.type === AUX || r.type === ITRACE_START) {
      const rec = r.decode() as {
        auxOffset?: bigint;
        auxSize?: bigint;
        flags?: bigint;
        pid?: number;
        tid?: number;
        sampleId?: { cpu?: number; tid?: number; time?: bigint };
      };
      const cpu = rec.sampleId?.cpu ?? -1;
      const tid = rec.sampleId?.tid ?? rec.tid ?? -1;
      const time = rec.sampleId?.time;
      if (r.type === AUX)
        pendingAux.push({
          cpu,
          tid,
          e: {
            auxOffset: rec.auxOffset!,
            auxSize: rec.auxSize!,
            flags: rec.flags!,
            ...(time !== undefined ? { time } : {}),
          },
        });
      else pendingStarts.push({ cpu, s: { pid: rec.pid!, tid: rec.tid!, ...(time !== undefined ? { time } : {}) } });
    }
  }
  // AUX/ITRACE_START may come before AUXTRACE_INFO (which perf writes at the end in some modes)
  const qs = q();
  for (const a of pendingAux) qs.addAux(a.cpu, a.tid, a.e);
  for (const s of pendingStarts) qs.addItraceStart(s.cpu, s.s);
  return { queues: qs, ...(info ? { info } : {}) };
}
