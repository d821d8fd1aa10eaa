/**
 * One `perf script` sample line as text or JSON (perf 6.1 builtin-script.c
 * perf_sample__fprintf_start and process_event), from a decoded sample and
 * what the printer knows at that record (perf-script.ts ScriptPrinter).
 */
import { PerfType } from '../abi/event-attr.js';
import { FormatOptionError } from './errors.js';
import type { SampleRecord } from '../perfdata/index.js';
import { formatNsTime, formatPerfTime } from '../machine/time-format.js';
import { jsonHex, jsonLine, jsonTime } from './json-lines.js';
import { defaultFieldsFor, type ScriptField } from './perf-script-fields.js';
import { hex16 } from '../io/hex.js';
import type { TracingData } from '../perfdata/tracing/tracing-data.js';
import { TracePayloads } from './trace-payload.js';
import { zeroPad } from './c-printf.js';
import { resolveCallchain } from './script-callchain.js';

export interface SampleFields {
  pid: number;
  tid: number;
  cpu: number;
  time: bigint;
}

export const NO_U64 = BigInt.asUintN(64, -1n);

/** The optional columns between cpu and time: misc (miscColumn) and tod (ScriptTimes.tod). */
export interface StartColumns {
  misc?: string;
  tod?: string;
}

/** perf_sample__fprintf_start. `callchainComm`: comm unpadded (sample with ip + callchain). */
export function scriptStart(
  f: ReadonlySet<ScriptField>,
  comm: string | undefined,
  sf: SampleFields,
  callchainComm: boolean,
  ns = false,
  cols: StartColumns = {},
) {
  let line = '';
  if (f.has('comm')) {
    const c = comm ?? ':-1';
    line += callchainComm ? `${c} ` : `${c.padStart(16)} `;
  }
  if (f.has('pid') && f.has('tid')) line += `${String(sf.pid).padStart(5)}/${String(sf.tid).padEnd(5)} `;
  else if (f.has('pid')) line += `${String(sf.pid).padStart(5)} `;
  else if (f.has('tid')) line += `${String(sf.tid).padStart(5)} `;
  if (f.has('cpu')) line += `[${zeroPad(sf.cpu, 3)}] `;
  if (cols.misc !== undefined) line += cols.misc;
  if (cols.tod !== undefined) line += `${cols.tod} `;
  // perf: "%5lu.%09llu: " with --ns, else "%12s: " of secs.usecs
  if (f.has('time'))
    line += ns ? `${formatNsTime(sf.time).padStart(15)}: ` : `${formatPerfTime(sf.time).padStart(12)}: `;
  return line;
}

/** What a sample line needs beside the sample: perf's state at that record. */
export interface SampleLine {
  fields: ReadonlySet<ScriptField>;
  comm: string | undefined;
  period: bigint;
  event: string;
  /** Event names are padded to the longest name of the file. */
  eventWidth: number;
  /** The resolved callchain (resolveCallchain), printed one address a line; undefined: ip on the line. */
  chain: bigint[] | undefined;
  /** The file has callchains for this event type: comm is printed unpadded then. */
  callchainComm: boolean;
  /** --ns */
  ns?: boolean;
  /** " sym+0xoff (dso)" after the ip, and after each callchain entry (script-symbols.ts). */
  ipSymbol?: string;
  chainSymbols?: string[];
  /** " sym+0xoff (dso)" after the addr of a page-fault sample (addrColumns in script-symbols.ts). */
  addrSymbol?: string;
  /** The tracepoint payload (the `trace` field, trace-payload.ts). */
  trace?: string;
  /** The misc and tod columns, the columns before ip and those after it (SampleExtras). */
  start?: StartColumns;
  beforeIp?: string;
  afterIp?: string;
  /** The same columns as JSON members (SampleExtras.json). */
  json?: Record<string, unknown>;
}

/** process_event for a sample: one line (or one line and its callchain lines). */
export function sampleText(rec: SampleRecord, sf: SampleFields, l: SampleLine): string {
  const f = l.fields;
  let line = scriptStart(f, l.comm, sf, f.has('ip') && l.callchainComm, l.ns, l.start);
  if (f.has('period')) line += `${l.period.toString().padStart(10)} `;
  if (f.has('event')) line += `${l.event.padStart(l.eventWidth)}: `;
  if (l.trace !== undefined) line += l.trace;
  if (f.has('addr')) line += hex16(rec.addr ?? 0n) + (l.addrSymbol ?? '');
  line += l.beforeIp ?? '';
  if (f.has('ip')) {
    if (l.chain) {
      line += '\n';
      l.chain.forEach((ip, i) => {
        line += `\t${hex16(ip)}${l.chainSymbols?.[i] ?? ''}\n`;
      });
    } else {
      line += ` ${hex16(rec.ip ?? 0n)}${l.ipSymbol ?? ''}`;
    }
  }
  return `${line}${l.afterIp ?? ''}\n`;
}

/** The JSON Lines form of a sample line (docs/json/sample.schema.json). */
export function sampleJson(rec: SampleRecord, sf: SampleFields, l: SampleLine, offset: number): string {
  const f = l.fields;
  const o: { type: string } & Record<string, unknown> = { type: 'sample', offset };
  if (f.has('comm')) o.comm = l.comm ?? ':-1';
  if (f.has('pid')) o.pid = sf.pid;
  if (f.has('tid')) o.tid = sf.tid;
  if (f.has('cpu')) o.cpu = sf.cpu;
  if (l.start?.misc !== undefined) o.misc = l.start.misc.trimEnd();
  if (f.has('time')) Object.assign(o, jsonTime(sf.time));
  if (f.has('period')) o.period = Number(l.period);
  if (f.has('event')) o.event = l.event;
  if (l.trace !== undefined) o.trace = l.trace;
  if (f.has('addr')) o.addr = jsonHex(rec.addr ?? 0n);
  if (f.has('ip')) o.ip = jsonHex(rec.ip ?? 0n);
  if (l.chain) o.callchain = l.chain.map(jsonHex);
  if (l.json) Object.assign(o, l.json);
  return jsonLine(o);
}

export interface FormatScriptOptions {
  /** perf's -F fields (default: perf's defaults for an event of attrType). */
  fields?: ScriptField[];
  /** The event's perf_event_attr.type (tracepoints have other default fields). */
  attrType?: number;
  /** The event's sample_period: perf prints it as the period of a sample without PERIOD. */
  samplePeriod?: bigint;
  /** The thread's name (perf prints ":-1" when it has none). */
  comm?: string;
  /** The event's name (perf's evsel__name). */
  event?: string;
  /** Pad the event name to this width (perf: the longest event name in the file). */
  eventWidth?: number;
  /** Print the callchain below the line, as perf does for a sample that has one. */
  callchain?: boolean;
  json?: boolean;
  /** A tracepoint's formats and its id (the attr's config), for the `trace` field (%pS prints addresses). */
  tracingData?: TracingData;
  config?: bigint;
}

/**
 * `perf script`'s text for one sample, without the state a whole file gives
 * (a ScriptPrinter keeps that: thread names, user-space map offsets in
 * callchains, event-name widths).
 */
export function formatScript(sample: SampleRecord, opts: FormatScriptOptions = {}): string {
  const fields = new Set(opts.fields ?? defaultFieldsFor(opts.attrType ?? 0));
  const sf: SampleFields = {
    pid: sample.pid ?? -1,
    tid: sample.tid ?? -1,
    cpu: sample.cpu ?? -1,
    time: sample.time ?? NO_U64,
  };
  const withChain = opts.callchain === true && sample.callchain !== undefined;
  const l: SampleLine = {
    fields,
    comm: opts.comm,
    period: sample.period ?? opts.samplePeriod ?? 0n,
    event: opts.event ?? '[unknown]',
    eventWidth: opts.eventWidth ?? 0,
    chain: withChain && fields.has('ip') ? resolveCallchain(sample.callchain!) : undefined,
    callchainComm: withChain,
  };
  if (fields.has('trace') && opts.attrType === PerfType.TRACEPOINT && sample.raw) {
    // never a line without its payload: no formats is an error, as in ScriptPrinter
    if (!opts.tracingData || opts.config === undefined)
      throw new FormatOptionError('-F trace: pass tracingData and config to print the payload (or -trace)');
    l.trace = new TracePayloads(opts.tracingData, () => undefined).text(Number(opts.config), sample.raw);
  }
  return opts.json ? sampleJson(sample, sf, l, sample.fileOffset) : sampleText(sample, sf, l);
}
