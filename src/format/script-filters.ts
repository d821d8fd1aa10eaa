/**
 * `perf script`'s sample filters, with perf 6.1's syntax and rules:
 * `--cpu LIST` (perf_session__cpu_bitmap; samples and side-band records),
 * `--pid`/`--tid`/`--comm LIST` (thread__is_filtered; samples only) and
 * `--time RANGES` (util/time-utils.c perf_time__parse_for_ranges; samples
 * only). Bad input is a FormatOptionError with perf's message.
 */
import { readFileFeature } from '../perfdata/file-feature.js';
import { Feature } from '../abi/feature.js';
import { SampleType } from '../abi/sample-format.js';
import type { PerfFile } from '../perfdata/perf-file.js';
import { FormatOptionError } from './errors.js';

export interface ScriptFilterOptions {
  cpu?: string;
  pid?: string;
  tid?: string;
  comm?: string;
  time?: string;
}

export interface TimeRange {
  /** 0: open. */
  start: bigint;
  /** 0: open. */
  end: bigint;
}

const NSEC = 1_000_000_000n;

/** parse_nsec_time: "secs[.frac]" with at most 9 fraction digits; undefined when invalid. */
function parseNsecTime(s: string): bigint | undefined {
  const m = /^\s*(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > 9) return undefined;
  return BigInt(m[1] || '0') * NSEC + BigInt(frac.padEnd(9, '0') || '0');
}

/** perf_time__parse_str: "start,end", either side may be empty. */
function parseOne(s: string): TimeRange | undefined {
  const comma = s.indexOf(',');
  const startStr = comma < 0 ? s : s.slice(0, comma);
  const endStr = comma < 0 ? '' : s.slice(comma + 1);
  const start = startStr === '' ? 0n : parseNsecTime(startStr);
  const end = endStr === '' ? 0n : parseNsecTime(endStr);
  if (start === undefined || end === undefined) return undefined;
  if (end !== 0n && end < start) return undefined;
  return { start, end };
}

/** perf_time__parse_strs: ranges "a,b c,d" (space separated), no overlap. */
function parseRanges(str: string): TimeRange[] | undefined {
  const num = [...str].filter((c) => c === ',').length;
  if (num === 0) return undefined;
  const out: TimeRange[] = [];
  let p = 0;
  for (let i = 0; i < num - 1; i++) {
    const arg = p;
    p = str.indexOf(',', p) + 1;
    while (p < str.length && /\s/.test(str[p]!)) p++;
    while (p < str.length && !/\s/.test(str[p]!)) if (str[p++] === ',') return undefined;
    const piece = str.slice(arg, p);
    if (p < str.length) p++;
    const r = parseOne(piece);
    if (!r) return undefined;
    out.push(r);
  }
  const last = parseOne(str.slice(p));
  if (!last) return undefined;
  out.push(last);
  for (let i = 0; i + 1 < out.length; i++) if (out[i]!.end >= out[i + 1]!.start) return undefined;
  return out;
}

/** strtod over the whole string ('' is 0, as strtod leaves endptr == str + 0). */
function parsePercent(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const c = s.indexOf('%');
  if (c < 0) return undefined;
  const num = s.slice(0, c);
  if (num !== '' && !/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(num)) return undefined;
  return (num === '' ? 0 : Number(num)) / 100;
}

function percentRange(startP: number, endP: number, first: bigint, last: bigint): TimeRange | undefined {
  if (startP < 0 || startP > 1 || endP < 0 || endP > 1) return undefined;
  const total = Number(last - first);
  const start = first + BigInt(Math.round(startP * total));
  let end = first + BigInt(Math.round(endP * total));
  if (end > start && end !== last) end -= 1n;
  return { start, end };
}

/** perf_time__percent_parse_str: "10%/2,10%/3", "0%-10%,30%-40%" or "50%". */
function parsePercentRanges(str: string, first: bigint, last: bigint): TimeRange[] | undefined {
  const size = [...str].filter((c) => c === ',').length + 1;
  const slash = str.includes('/');
  if (!slash && !str.includes('-')) {
    if (!str.endsWith('%')) return undefined;
    const p = parsePercent(str);
    return p === undefined || p <= 0 ? undefined : one(percentRange(0, p, first, last));
  }
  const pieces = str.split(',');
  if (str.endsWith(',')) pieces.pop();
  if (pieces.length > size) return undefined;
  const out: TimeRange[] = [];
  for (const piece of pieces) {
    let r: TimeRange | undefined;
    if (slash) {
      const k = piece.indexOf('/');
      const p = k < 0 ? undefined : parsePercent(piece.slice(0, k));
      const idx = k < 0 ? '' : piece.slice(k + 1);
      if (p === undefined || p <= 0 || !/^\s*[+-]?\d*$/.test(idx)) return undefined;
      const i = Number.parseInt(idx, 10) || 0;
      r = percentRange(p * (i - 1), p * i, first, last);
    } else {
      const k = piece.indexOf('-');
      const a = parsePercent(k < 0 ? piece : piece.slice(0, k));
      const b = k < 0 ? undefined : parsePercent(piece.slice(k + 1));
      if (a === undefined || b === undefined) return undefined;
      r = percentRange(a, b, first, last);
    }
    if (!r) return undefined;
    out.push(r);
  }
  return out;
}

const one = (r: TimeRange | undefined): TimeRange[] | undefined => (r ? [r] : undefined);

/** perf_time__ranges_skip_sample. */
export function timeSkipped(ranges: readonly TimeRange[], t: bigint): boolean {
  if (ranges.length === 0 || t === 0n) return false;
  if (ranges.length === 1) {
    const r = ranges[0]!;
    return (r.start !== 0n && t < r.start) || (r.end !== 0n && t > r.end);
  }
  return !ranges.some((r) => t >= r.start && (t <= r.end || r.end === 0n));
}

/** "--time" → ranges; `sampleTime` = HEADER_SAMPLE_TIME (needed for percentages). */
export function parseTimeOption(str: string, sampleTime: { first: bigint; last: bigint } | undefined): TimeRange[] {
  if (str.includes('%')) {
    if (!sampleTime || (sampleTime.first === 0n && sampleTime.last === 0n))
      throw new FormatOptionError('--time: HINT: no first/last sample time found in perf data.');
    const r = parsePercentRanges(str, sampleTime.first, sampleTime.last);
    if (!r) throw new FormatOptionError('Invalid time string');
    return r;
  }
  const r = parseRanges(str);
  if (!r) throw new FormatOptionError('Invalid time string');
  return r;
}

/** perf_cpu_map__new syntax: "0-2,5". */
export function parseCpuList(str: string, nrCpus: number): Set<number> {
  const out = new Set<number>();
  for (const item of str.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(item);
    if (!m) throw new FormatOptionError('Invalid cpu_list');
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) throw new FormatOptionError('Invalid cpu_list');
    for (let c = a; c <= b; c++) {
      if (c >= nrCpus) throw new FormatOptionError(`Requested CPU ${c} too large. Consider raising MAX_NR_CPUS`);
      out.add(c);
    }
  }
  return out;
}

function parseIntList(str: string, what: string): Set<number> {
  const out = new Set<number>();
  for (const item of str.split(',')) {
    if (item === '') continue;
    // a repeated entry fails perf's strlist too (perf then prints nothing and exits 0)
    if (!/^\s*-?\d+$/.test(item) || out.has(Number(item))) throw new FormatOptionError(`problems parsing ${what} list`);
    out.add(Number(item));
  }
  return out;
}

export class ScriptFilter {
  cpus: Set<number> | undefined;
  pids: Set<number> | undefined;
  tids: Set<number> | undefined;
  comms: Set<string> | undefined;
  ranges: TimeRange[] = [];

  /** Reads NRCPUS and SAMPLE_TIME from the file when the options need them. */
  static async create(o: ScriptFilterOptions, file: PerfFile): Promise<ScriptFilter> {
    const f = new ScriptFilter();
    if (o.cpu !== undefined) {
      const nr = await feature(file, Feature.NRCPUS);
      f.cpus = parseCpuList(o.cpu, nr?.kind === 'nrcpus' ? nr.avail : 0);
      const firstOfType = new Map<number, bigint>();
      for (const a of file.attrs) if (!firstOfType.has(a.attr.type)) firstOfType.set(a.attr.type, a.attr.sampleType);
      for (const [type, st] of firstOfType)
        if (type < 6 && (st & SampleType.CPU) === 0n)
          throw new FormatOptionError('File does not contain CPU events. Remove -C option to proceed.');
    }
    if (o.pid !== undefined) f.pids = parseIntList(o.pid, 'pid');
    if (o.tid !== undefined) f.tids = parseIntList(o.tid, 'tid');
    if (o.comm !== undefined) {
      const names = o.comm.split(',').filter(Boolean);
      f.comms = new Set(names);
      if (f.comms.size !== names.length) throw new FormatOptionError('problems parsing comm list');
    }
    if (o.time !== undefined) {
      const st = await feature(file, Feature.SAMPLE_TIME);
      f.ranges = parseTimeOption(o.time, st?.kind === 'sample_time' ? st : undefined);
    }
    return f;
  }

  /** filter_cpu: records without a cpu pass. */
  cpuSkipped(cpu: number | undefined): boolean {
    return this.cpus !== undefined && cpu !== undefined && cpu !== -1 && !this.cpus.has(cpu);
  }

  /** sampleSkipped without a time, as one function (what the fast lines call); undefined when no such filter is set. */
  get idSkip(): ((cpu: number, pid: number, tid: number, comm: string) => boolean) | undefined {
    if (!(this.cpus || this.pids || this.tids || this.comms)) return undefined;
    this.idSkipFn ??= (cpu, pid, tid, comm) => this.sampleSkipped(cpu, pid, tid, comm, undefined);
    return this.idSkipFn;
  }
  private idSkipFn: ((cpu: number, pid: number, tid: number, comm: string) => boolean) | undefined;

  /** process_sample_event's filters: cpu, thread (pid, tid, comm) and time. */
  sampleSkipped(cpu: number, pid: number, tid: number, comm: string, time: bigint | undefined): boolean {
    if (this.cpuSkipped(cpu)) return true;
    if (this.comms && !this.comms.has(comm)) return true;
    if (this.pids && !this.pids.has(pid)) return true;
    if (this.tids && !this.tids.has(tid)) return true;
    return time !== undefined && timeSkipped(this.ranges, time);
  }
}

const feature = readFileFeature;
