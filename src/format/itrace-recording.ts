/**
 * What perf script's itrace lines need from a recording, for
 * perfItraceSink: the names of the synthesized events and the width perf
 * pads event names to, symbols and dso names as perf resolves kernel
 * addresses (kcore_dir's kallsyms in `[kernel.kallsyms]`, KSYMBOL maps named
 * after the symbol), and the code bytes for `insn` (read as of the decoder's
 * image clock: the code as it was when the instruction was walked).
 */
import type { PtRecording } from '../intelpt/flow/recording.js';
import { QueueTasks } from '../intelpt/flow/queue-tasks.js';
import { eventModifiers } from '../session/event-names.js';
import { classifyInsn } from '../x86/classify.js';
import type { ItraceSpec } from './itrace-options.js';
import {
  otherSampleLine,
  type ItraceFields,
  type ItraceLineField,
  type ItraceTask,
  type PerfItraceOptions,
  type PerfItraceSink,
} from './itrace-perf.js';
import { tracesKernel } from '../machine/code-warnings.js';
import { cbrScale } from '../intelpt/flow/time-conv.js';
import { FormatOptionError } from './errors.js';
import { PerfType } from '../abi/event-attr.js';
import { SampleType } from '../abi/sample-format.js';

const UNKNOWN = '[unknown]';
/** intel_pt config bit pwr_evt (INTEL_PT_CFG_PWR_EVT_EN): the power-event packets are traced. */
const PWR_EVT_EN = 1n << 4n;
/** perf's PERF_TYPE_SYNTH (INT_MAX + 1): the type of the power events it synthesizes. */
const PERF_TYPE_SYNTH = 0x8000_0000;

export function perfItraceOptions(
  rec: PtRecording,
  spec: ItraceSpec,
  fields: ItraceFields,
  o: {
    cpu?: number | undefined;
    ns?: boolean;
    clock?: { time: bigint };
    tasks?: QueueTasks;
    dsoPad?: number;
  } = {},
): PerfItraceOptions {
  const tasks = o.tasks ?? new QueueTasks(rec.taskOptions);
  const cpu = o.cpu;
  const clock = o.clock ?? { time: -1n };
  const mods = rec.ptAttr ? eventModifiers(rec.ptAttr) : '';
  const insnEvent = `instructions${mods}`;
  const branchEvent = `branches${mods}`;
  // evlist__max_name_len: the file's events and the ones perf synthesizes for these options
  const names = rec.machine.evidence.events.map((e) => e.name);
  if (spec.branches) names.push(branchEvent);
  if (spec.instructions) names.push(insnEvent);
  // intel_pt_synth_events: cbr and psb, and the packets' events when the pwr_evt config bit was set
  const pwrEvt = ((rec.ptAttr?.config ?? 0n) & PWR_EVT_EN) !== 0n;
  if (spec.power) names.push('cbr', 'psb', ...(pwrEvt ? ['mwait', 'pwre', 'exstop', 'pwrx'] : []));
  const eventWidth = Math.max(0, ...names.map((n) => n.length));
  const m = rec.machine;
  const kmap = m.kernelMaps.find((k) => k.filename.startsWith('[kernel.kallsyms]'));
  const segs = m.kcore?.segments ?? [];
  const inKernel = (a: bigint): boolean =>
    segs.length
      ? segs.some((s) => a >= s.vaddr && a < s.vaddr + BigInt(s.bytes.length))
      : kmap !== undefined && a >= kmap.start && a < kmap.end;
  const tc = rec.timeConv;
  // machine__kernel_start: the kernel map's start, else 1 << 63
  let kernelStart = 1n << 63n;
  for (const k of m.kernelMaps) if (k.start < kernelStart) kernelStart = k.start;
  const taskOf = new Map<number, { changes: number; t: ItraceTask }>();
  return {
    instructions: spec.instructions,
    branches: spec.branches,
    errors: spec.errors,
    ...(spec.power
      ? {
          power: {
            synthFields: chainFields(rec, spec, fields, 'synth'),
            scale: cbrScale(rec.infoTimeConv, rec.maxNonTurboRatio),
          },
        }
      : {}),
    ...(o.dsoPad ? { dsoPad: o.dsoPad } : {}),
    filter: { calls: spec.calls, returns: spec.returns },
    fields: chainFields(rec, spec, fields, 'hardware'),
    userSet: fields.userSet,
    insnEvent,
    branchEvent,
    eventWidth,
    ...(cpu !== undefined ? { cpu } : {}),
    ...(tc ? { timeConv: tc } : {}),
    // perf_session__check_output_opt looks at the first event of each output type (synthesized ones come last)
    zeroTime: !tc && ((rec.attrs.find((a) => a.type === PerfType.HARDWARE)?.sampleType ?? 0n) & SampleType.TIME) !== 0n,
    period: spec.period,
    skip: spec.skip,
    lastBranch: spec.lastBranch,
    callchain: spec.callchain,
    addCallchain: spec.addCallchain,
    addLastBranch: spec.addLastBranch,
    kernelStart,
    kernelTraced: tracesKernel(m, rec.pmuType),
    ns: !!o.ns,
    symbol(addr) {
      if (inKernel(addr)) {
        const s = m.symbolizer.symbols.find(addr);
        return { name: s?.name, start: s?.start ?? 0n, dso: '[kernel.kallsyms]' };
      }
      const k = m.symbolizer.find(addr);
      if (k) return { name: k.name, start: k.start, dso: k.name };
      return { name: undefined, start: 0n, dso: UNKNOWN };
    },
    // the same object while the queue's pid, tid and comm stay (the sink keeps its line start per task object);
    // looked up again only after the side band moved (QueueTasks.changes)
    task(cpu) {
      let c = taskOf.get(cpu);
      if (c !== undefined && c.changes === tasks.changes) return c.t;
      const q = tasks.task(cpu);
      const comm = tasks.comm(q);
      if (c === undefined || c.t.pid !== q.pid || c.t.tid !== q.tid || c.t.comm !== comm)
        c = { changes: tasks.changes, t: { pid: q.pid, tid: q.tid, comm } };
      else c.changes = tasks.changes;
      taskOf.set(cpu, c);
      return c.t;
    },
    bytes(ip, len) {
      return m.image.read(ip, len, clock.time);
    },
    insnAt(ip) {
      const b = m.image.read(ip, 16, clock.time);
      const c = classifyInsn(b, ip);
      return c ? b.subarray(0, c.length) : new Uint8Array(0);
    },
  };
}

/**
 * The fields of an output type as perf script's process_attr leaves them for the synthesized events:
 * with callchains on (g or G: intel_pt turns on use_callchain, whatever -G says), the first synthesized
 * event of a type the file has no event of turns on ip and sym for the whole type when its sample_type
 * has a callchain (g) or a branch stack (l), unless -F took them off. The branches event, synthesized
 * first, has neither.
 */
function chainFields(
  rec: PtRecording,
  spec: ItraceSpec,
  f: ItraceFields,
  type: 'hardware' | 'synth',
): Set<ItraceLineField> {
  const base = type === 'hardware' ? f.fields : f.synthFields;
  if (!(spec.callchain || spec.addCallchain) || !(spec.callchain || spec.lastBranch)) return base;
  const first = type === 'hardware' ? spec.instructions && !spec.branches : !!spec.power;
  const fileType = type === 'hardware' ? PerfType.HARDWARE : PERF_TYPE_SYNTH;
  if (!first || rec.attrs.some((a) => a.type === fileType)) return base;
  const out = new Set(base);
  for (const x of ['ip', 'sym'] as const) if (!f.unset?.has(x)) out.add(x);
  return out;
}

/**
 * The other events' samples of the recording, each printing its perf script line through `line` when
 * the decoder reaches its time (decodeFlow's `others`), with the callchain (`G`) and branch entries (`L`)
 * the sink's thread stacks give it then. Samples with a callchain of their own are refused: decode does
 * not print recorded callchains.
 */
export function otherSampleDeliveries(
  rec: PtRecording,
  po: PerfItraceOptions,
  tasks: QueueTasks,
  line: (s: string) => void,
  sink?: PerfItraceSink,
): { time: bigint; offset: number; deliver(): void }[] {
  const withChain = rec.samples.find((s) => s.callchain);
  if (withChain)
    throw new FormatOptionError(
      `${rec.eventNames[withChain.attrIndex] ?? 'an event'}: samples with callchains are not supported by decode yet`,
    );
  return rec.samples
    .filter((s) => po.cpu === undefined || s.cpu === po.cpu)
    .map((s) => ({
      time: s.time,
      offset: s.offset,
      deliver: () => {
        const comm = tasks.threads.comm(s.pid, s.tid);
        line(otherSampleLine(po, s, rec.eventNames[s.attrIndex] ?? '[unknown]', comm, sink?.late(s)));
      },
    }));
}
