/**
 * The events `perfpoke record` opens: one software dummy event carrying all
 * side-band records (perf's "tracking" event), plus optional sampling events
 * from `-e`. Every attr has sample_id_all and IDENTIFIER so a reader can tell
 * records of different events apart by one fixed position (perf's id_pos).
 */
import {
  emptyAttr,
  PerfType,
  PERF_COUNT_SW_DUMMY,
  withAttrFlag,
  type AttrFlagName,
  type EventAttr,
} from '../abi/event-attr.js';
import { SampleType } from '../abi/sample-format.js';

/** perf 6.1's sizeof(struct perf_event_attr) (PERF_ATTR_SIZE_VER7): what it writes and reads best. */
export const RECORD_ATTR_SIZE = 128;

/** Non-sample records of every event carry this sample_id tail. */
export const TRACKING_SAMPLE_TYPE = SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.IDENTIFIER;
export const SAMPLING_SAMPLE_TYPE =
  SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.PERIOD | SampleType.IDENTIFIER;

export interface RecordEvent {
  /** perf's name for the event, as EVENT_DESC and `perf script` show it. */
  name: string;
  attr: EventAttr;
}

/** perf's generic names (tools/perf/util/parse-events.c event_symbols_sw/hw). */
const NAMED: Record<string, { type: number; config: bigint }> = {
  'cpu-clock': { type: PerfType.SOFTWARE, config: 0n },
  'task-clock': { type: PerfType.SOFTWARE, config: 1n },
  'page-faults': { type: PerfType.SOFTWARE, config: 2n },
  faults: { type: PerfType.SOFTWARE, config: 2n },
  'context-switches': { type: PerfType.SOFTWARE, config: 3n },
  cs: { type: PerfType.SOFTWARE, config: 3n },
  'cpu-migrations': { type: PerfType.SOFTWARE, config: 4n },
  migrations: { type: PerfType.SOFTWARE, config: 4n },
  'minor-faults': { type: PerfType.SOFTWARE, config: 5n },
  'major-faults': { type: PerfType.SOFTWARE, config: 6n },
  dummy: { type: PerfType.SOFTWARE, config: BigInt(PERF_COUNT_SW_DUMMY) },
  cycles: { type: PerfType.HARDWARE, config: 0n },
  'cpu-cycles': { type: PerfType.HARDWARE, config: 0n },
  instructions: { type: PerfType.HARDWARE, config: 1n },
  'cache-references': { type: PerfType.HARDWARE, config: 2n },
  'cache-misses': { type: PerfType.HARDWARE, config: 3n },
  branches: { type: PerfType.HARDWARE, config: 4n },
  'branch-instructions': { type: PerfType.HARDWARE, config: 4n },
  'branch-misses': { type: PerfType.HARDWARE, config: 5n },
};

export const KNOWN_EVENT_NAMES = Object.keys(NAMED);

function flags(names: AttrFlagName[]): bigint {
  let f = 0n;
  for (const n of names) f = withAttrFlag(f, n);
  return f;
}

export interface TrackingOptions {
  switchEvents: boolean;
  /** Ring data bytes: wake the reader when a quarter is used. */
  ringBytes: number;
}

/** How perf opens events for tasks: `inherit` to children; a workload's also `enable_on_exec`. */
export interface TaskFlags {
  inherit: boolean;
  enableOnExec: boolean;
}

/** Set perf's per-task bits on an event (system-wide events have neither). */
export function forTasks(ev: RecordEvent, t: TaskFlags): RecordEvent {
  let f = ev.attr.flags;
  if (t.inherit) f = withAttrFlag(f, 'inherit');
  if (t.enableOnExec) f = withAttrFlag(f, 'enable_on_exec');
  ev.attr.flags = f;
  return ev;
}

/**
 * The dummy tracking event: never samples, but carries MMAP/MMAP2, COMM,
 * FORK/EXIT, KSYMBOL, BPF_EVENT, TEXT_POKE (attr bit 33) and, if asked,
 * SWITCH_CPU_WIDE. Opened disabled; the addon enables it.
 */
export function trackingEvent(o: TrackingOptions): RecordEvent {
  const a = emptyAttr();
  a.type = PerfType.SOFTWARE;
  a.size = RECORD_ATTR_SIZE;
  a.config = BigInt(PERF_COUNT_SW_DUMMY);
  a.samplePeriod = 1n;
  a.sampleType = TRACKING_SAMPLE_TYPE;
  const names: AttrFlagName[] = [
    'disabled',
    'mmap',
    'comm',
    'task',
    'sample_id_all',
    'mmap2',
    'comm_exec',
    'ksymbol',
    'bpf_event',
    'text_poke',
    'watermark',
  ];
  if (o.switchEvents) names.push('context_switch');
  a.flags = flags(names);
  a.wakeupEvents = Math.max(64, Math.floor(o.ringBytes / 4)); // wakeup_watermark (union): a quarter full
  return { name: 'dummy', attr: a };
}

/**
 * Parse one `-e` spec (a name from KNOWN_EVENT_NAMES, optional `:u`/`:k`
 * modifiers) into a sampling event at `freq` Hz. Throws Error naming the
 * spec; the CLI turns it into a usage error.
 */
export function samplingEvent(spec: string, freq: number, ringBytes: number): RecordEvent {
  const [base = '', mods = ''] = spec.split(':', 2);
  const known = NAMED[base];
  if (!known) throw new Error(`unknown event ${JSON.stringify(spec)} (known: ${KNOWN_EVENT_NAMES.join(', ')})`);
  if (!/^[uk]*$/.test(mods)) throw new Error(`unsupported modifier in event ${JSON.stringify(spec)} (only :u and :k)`);
  const a = emptyAttr();
  a.type = known.type;
  a.size = RECORD_ATTR_SIZE;
  a.config = known.config;
  a.samplePeriod = BigInt(freq);
  a.sampleType = SAMPLING_SAMPLE_TYPE;
  const names: AttrFlagName[] = ['disabled', 'freq', 'sample_id_all', 'watermark'];
  if (mods.includes('u') && !mods.includes('k')) names.push('exclude_kernel', 'exclude_hv');
  if (mods.includes('k') && !mods.includes('u')) names.push('exclude_user');
  a.flags = flags(names);
  a.wakeupEvents = Math.max(64, Math.floor(ringBytes / 4));
  return { name: spec, attr: a };
}
