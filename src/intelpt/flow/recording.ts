/**
 * Read what the flow decoder needs from an intel_pt recording: the per-CPU
 * queues of AUXTRACE buffers (src/intelpt/aux-queues.ts; a queue's buffers
 * in AUX offset order make that CPU's trace), the intel_pt AUXTRACE_INFO
 * (time conversion, TSC and return-compression bits), and the code image
 * with its pokes (src/machine).
 *
 * The AUX data is not kept: each queue remembers where its buffers' data sits
 * in the file, and the decoder reads it from there through a bounded window
 * (QueueTrace, packet-reader.ts), so memory stays flat as the trace grows.
 * Input read from a pipe ('-') cannot be read again: its buffers are kept.
 */
import { readFileFeature } from '../../perfdata/file-feature.js';
import { open, stat } from 'node:fs/promises';
import { Feature } from '../../abi/feature.js';
import { PerfFile } from '../../perfdata/perf-file.js';
import { RawRecord } from '../../perfdata/raw-record.js';
import type { AuxtraceRecord } from '../../perfdata/records/auxtrace.js';
import { RecordType } from '../../abi/record-type.js';
import { FormatError } from '../../io/errors.js';
import { loadMachine, type Machine } from '../../machine/from-perf-data.js';
import { cbrScale, type PtTimeConv } from './time-conv.js';
import type { EventAttr } from '../../abi/event-attr.js';
import type { FlowPoke } from './decode.js';
import { INTEL_PT_PRIV } from '../auxtrace-info.js';
import { AuxQueues, type AuxBuffer } from '../aux-queues.js';
import { QueueTrace, type TraceSource } from './trace-source.js';
import { otherSampleOf, taskEventOf, type OtherSample } from './task-events.js';
import { Session } from '../../session/session.js';
import type { TaskEvent, TaskOptions } from './queue-tasks.js';
import { switchIps, type SwitchIps } from './sync-switch.js';
import { tracesKernel } from '../../machine/code-warnings.js';

export interface PtBuffer {
  /** Offset of the AUXTRACE record in the file. */
  fileOffset: number;
  /** Offset of this buffer in the CPU's trace (its queue's buffers back to back). */
  start: number;
  size: number;
  auxOffset: bigint;
}

export interface PtRecording {
  machine: Machine;
  /** One per AUX queue: the CPU (the mmap index for a per-thread queue), its trace, its buffers. */
  cpus: { cpu: number; trace: TraceSource; buffers: PtBuffer[] }[];
  pokes: FlowPoke[];
  timeConv?: PtTimeConv;
  /** AUXTRACE_INFO's time conversion even when decoding is timeless, and max non-turbo ratio (0: not given). */
  infoTimeConv: PtTimeConv;
  maxNonTurboRatio: number;
  /** MTC timing: the config's mtc_period (perf's intel_pt_mtc_period) and AUXTRACE_INFO's TSC:CTC ratio. */
  mtc: { shift: number; tscCtcN: number; tscCtcD: number };
  retCompression: boolean;
  pmuType: number;
  /** The intel_pt event's attr (its exclude_* bits name the synthesized events). */
  ptAttr?: EventAttr;
  /** perf times of the side-band records (every record but AUXTRACE that has a time), in file order. */
  eventTimes: bigint[];
  /** The side-band records that move tasks (ITRACE_START, SWITCH*, COMM, FORK), in file order. */
  taskEvents: TaskEvent[];
  /** How perf reads them: AUXTRACE_INFO's HAVE_SCHED_SWITCH and PER_CPU_MMAPS. */
  taskOptions: TaskOptions;
  /** Samples of the file's other events (perf script prints them among the synthesized ones), in file order. */
  samples: OtherSample[];
  /** perf's name of each attr (evsel__name), and the attrs, in file order. */
  eventNames: string[];
  attrs: EventAttr[];
}

/**
 * The record readers' window here. PerfFile's default (4 MiB) made the peak RSS grow with the trace: glibc
 * serves a freed block's size from the heap from then on, so whether the second pass's window landed there
 * (and stayed, untrimmed) depended on when the GC freed the first one, i.e. on how long the first pass ran.
 * Windows this size cost a few MiB at most, whatever the trace; the records are read as fast.
 */
const READ_WINDOW = 256 << 10;

export async function loadPtRecording(input: string): Promise<PtRecording> {
  const machine = await loadMachine(input, { windowSize: READ_WINDOW });
  const f = await PerfFile.open(machine.dataFile, { windowSize: READ_WINDOW });
  let priv: bigint[] | undefined;
  // Queues by CPU (by thread for cpu -1), as the decoder always keyed them.
  const queues = new AuxQueues(true);
  const recordOffset = new Map<AuxBuffer, number>();
  const add = (rec: AuxBufferRecord, recOffset: number, dataOffset: number, data?: Uint8Array): void => {
    const b: AuxBuffer = {
      offset: rec.offset,
      size: Number(rec.dataSize),
      reference: rec.reference,
      idx: rec.idx,
      tid: rec.tid,
      cpu: rec.cpu,
      fileOffset: dataOffset,
      ...(data ? { data } : {}),
    };
    queues.addBuffer(b);
    recordOffset.set(b, recOffset);
  };
  const keep = input === '-';
  const eventTimes: bigint[] = [];
  const taskEvents: TaskEvent[] = [];
  const samples: OtherSample[] = [];
  const session = new Session(f);
  if (!f.pipe) await session.loadNames();
  try {
    // With perf's AUXTRACE index (HEADER_AUXTRACE) the buffers are found without reading the AUX data,
    // as perf queues them (auxtrace_queues__process_index); the record pass still collects the side-band
    // records' times (decoding in time order stops at each, as perf does).
    const indexed = !keep && (await queueFromIndex(f, add));
    // the AUX data itself is read only from a pipe (it cannot be read again): a file's buffers are read when decoded
    for await (const raw of f.records({ auxData: keep })) {
      if (raw.type === RecordType.AUXTRACE_INFO) {
        const r = raw.decode();
        if (r.kind === 'auxtrace_info' && r.auxType === 1) priv = r.priv;
      } else if (raw.type !== RecordType.AUXTRACE) {
        const t = raw.timestamp();
        if (t) eventTimes.push(t);
        const te = taskEventOf(raw);
        if (te) taskEvents.push(te);
        else if (raw.type === RecordType.SAMPLE) {
          const i = session.attrIndexOf(raw);
          const a = f.attrs[i];
          if (a && a.attr.type !== pmuTypeOf(priv)) samples.push(otherSampleOf(raw, i, a.attr.samplePeriod));
        }
      } else if (raw.type === RecordType.AUXTRACE && !indexed) {
        const r = raw.decode();
        if (r.kind !== 'auxtrace') continue;
        const data = raw.auxData?.slice();
        add(r, raw.fileOffset, raw.fileOffset + raw.size, data);
      }
    }
  } finally {
    await f.close();
  }
  if (!priv)
    throw new FormatError({
      kind: 'unsupported',
      offset: 0,
      structure: 'AUXTRACE_INFO',
      file: machine.dataFile,
      expected: 'an intel_pt AUXTRACE_INFO record (type 1)',
      actual: 'none',
    });
  const p = (i: number): bigint => priv![i] ?? 0n;
  const pmuType = Number(p(INTEL_PT_PRIV.PMU_TYPE));
  const ptAttr = f.attrs.find((a) => a.attr.type === pmuType)?.attr;
  const config = ptAttr?.config ?? 0n;
  const tscBit = p(INTEL_PT_PRIV.TSC_BIT);
  // perf's intel_pt_timeless_decoding: TSC bit, cap_user_time_zero, and TIME in every attr's sample_type.
  const timed =
    tscBit !== 0n &&
    p(INTEL_PT_PRIV.CAP_USER_TIME_ZERO) !== 0n &&
    (config & tscBit) !== 0n &&
    f.attrs.every((a) => (a.attr.sampleType & 4n) !== 0n);
  const infoTimeConv: PtTimeConv = {
    shift: Number(p(INTEL_PT_PRIV.TIME_SHIFT)),
    mult: Number(p(INTEL_PT_PRIV.TIME_MULT)),
    zero: p(INTEL_PT_PRIV.TIME_ZERO),
  };
  const timeConv: PtTimeConv | undefined = timed ? infoTimeConv : undefined;
  // intel_pt_mtc_period: the mtc_period field of the config, where AUXTRACE_INFO's mask puts it
  const freqBits = p(INTEL_PT_PRIV.MTC_FREQ_BITS);
  let mtcShift = 0;
  if (freqBits) {
    let low = 0n;
    while (!((freqBits >> low) & 1n)) low++;
    mtcShift = Number((config & freqBits) >> low);
  }
  const mtc = {
    shift: mtcShift,
    tscCtcN: Number(p(INTEL_PT_PRIV.TSC_CTC_N)),
    tscCtcD: Number(p(INTEL_PT_PRIV.TSC_CTC_D)),
  };
  const noret = p(INTEL_PT_PRIV.NORETCOMP_BIT);
  const retCompression = !(noret && config & noret);
  const cpus = queues
    .all()
    .filter((q) => q.buffers.length > 0)
    .map((q) => {
      const buffers: PtBuffer[] = [];
      let pos = 0;
      for (const b of q.buffers) {
        buffers.push({ fileOffset: recordOffset.get(b)!, start: pos, size: b.size, auxOffset: b.offset });
        pos += b.size;
      }
      const trace = new QueueTrace(
        machine.dataFile,
        q.buffers.map((b) => ({ dataOffset: b.fileOffset!, size: b.size, ...(b.data ? { data: b.data } : {}) })),
      );
      return { cpu: q.cpu >= 0 ? q.cpu : q.buffers[0]!.idx, trace, buffers };
    })
    .sort((a, b) => a.cpu - b.cpu);
  const pokes: FlowPoke[] = machine.image.pokes.map((pp) => ({
    time: pp.poke.time,
    addr: pp.poke.addr,
    len: Math.max(pp.poke.oldBytes.length, pp.poke.newBytes.length),
  }));
  const taskOptions: TaskOptions = {
    haveSchedSwitch: Number(p(INTEL_PT_PRIV.HAVE_SCHED_SWITCH)),
    perCpuMmaps: p(INTEL_PT_PRIV.PER_CPU_MMAPS) !== 0n,
  };
  return {
    machine,
    cpus,
    pokes,
    timeConv,
    infoTimeConv,
    maxNonTurboRatio: Number(p(INTEL_PT_PRIV.MAX_NONTURBO_RATIO)),
    mtc,
    retCompression,
    pmuType,
    eventTimes,
    taskEvents,
    taskOptions,
    samples,
    eventNames: session.eventNames(),
    attrs: f.attrs.map((a) => a.attr),
    ...(ptAttr ? { ptAttr } : {}),
  };
}

/** The timing options decodeFlow takes from a recording: perf's max_non_turbo_ratio and MTC timing. */
export function flowTiming(rec: PtRecording): { maxNonTurboRatio: number; mtc: PtRecording['mtc'] } {
  return { maxNonTurboRatio: cbrScale(rec.infoTimeConv, rec.maxNonTurboRatio).maxNonTurbo, mtc: rec.mtc };
}

/** PERF_RECORD_AUXTRACE without its data: header, size, offset, reference, idx, tid, cpu, reserved. */
const AUXTRACE_RECORD_SIZE = 48;

/** What a queued buffer needs of its AUXTRACE record. */
type AuxBufferRecord = Pick<AuxtraceRecord, 'dataSize' | 'offset' | 'reference' | 'idx' | 'tid' | 'cpu'>;

/**
 * Queue every AUXTRACE record the file's AUXTRACE index lists, reading only
 * the 48-byte records. False (nothing queued) when there is no index or an
 * entry does not point at an AUXTRACE record whose data fits in the file.
 */
async function queueFromIndex(
  f: PerfFile,
  add: (rec: AuxBufferRecord, recOffset: number, dataOffset: number) => void,
): Promise<boolean> {
  if (f.pipe) return false;
  const feat = await readFileFeature(f, Feature.AUXTRACE);
  if (feat?.kind !== 'auxtrace' || feat.entries.length === 0) return false;
  const size = (await stat(f.path)).size;
  const fh = await open(f.path, 'r');
  const found: [AuxBufferRecord, number, number][] = [];
  try {
    const head = new Uint8Array(AUXTRACE_RECORD_SIZE);
    for (const e of feat.entries) {
      const { bytesRead } = await fh.read(head, 0, head.length, e.fileOffset);
      if (bytesRead < head.length) return false;
      const raw = new RawRecord(head, e.fileOffset, f.le, undefined, f.textPokeAbi);
      if (raw.type !== RecordType.AUXTRACE || raw.size !== AUXTRACE_RECORD_SIZE) return false;
      const r = raw.decode();
      if (r.kind !== 'auxtrace') return false;
      const data = e.fileOffset + raw.size;
      if (data + Number(r.dataSize) > size) return false;
      found.push([{ ...r }, e.fileOffset, data]);
    }
  } finally {
    await fh.close();
  }
  for (const [r, at, data] of found) add(r, at, data);
  return true;
}

/** The intel_pt PMU type from AUXTRACE_INFO (read before any sample in perf's files); -1 before it. */
function pmuTypeOf(priv: bigint[] | undefined): number {
  return priv ? Number(priv[INTEL_PT_PRIV.PMU_TYPE] ?? -1n) : -1;
}

/** Where perf's sync_switch finds `__switch_to` here (sync-switch.ts); undefined when perf does not use it. */
export function recordingSwitchIps(rec: PtRecording): SwitchIps | undefined {
  const m = rec.machine;
  // machine__kernel_map: the kernel's own map; its dso's symbols, at addresses inside the map
  const k = m.kernelMaps.find((x) => x.filename.startsWith('[kernel.kallsyms]'));
  const symbol = (name: string): bigint | undefined => {
    if (!k) return undefined;
    const s = m.symbolizer.symbols.findName(name, true);
    return s && s.start >= k.start && s.start < k.end ? s.start : undefined;
  };
  // HAVE_SCHED_SWITCH 1 (sched:sched_switch samples name the next task) is not modelled: no sync_switch
  if (rec.taskOptions.haveSchedSwitch === 1) return undefined;
  return switchIps({
    ...rec.taskOptions,
    timed: rec.timeConv !== undefined,
    kernelTraced: tracesKernel(m, rec.pmuType),
    symbol,
  });
}
