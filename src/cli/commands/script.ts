import type { Command } from 'commander';
import { attrFlag, PerfType } from '../../abi/event-attr.js';
import { Feature } from '../../abi/feature.js';
import {
  RecordType,
  PERF_RECORD_MISC_CPUMODE_MASK,
  PERF_RECORD_MISC_KERNEL,
  PERF_RECORD_MISC_GUEST_KERNEL,
} from '../../abi/record-type.js';
import {
  SampleType,
  PERF_CONTEXT_MAX,
  PERF_CONTEXT_HV,
  PERF_CONTEXT_KERNEL,
  PERF_CONTEXT_USER,
  PERF_CONTEXT_GUEST,
  PERF_CONTEXT_GUEST_KERNEL,
  PERF_CONTEXT_GUEST_USER,
} from '../../abi/sample-format.js';
import type { PerfRecord, RawRecord } from '../../perfdata/index.js';
import { openSession, type Session } from '../../session/session.js';
import { formatPerfEvent } from '../../session/event-text.js';
import { ThreadComms } from '../../session/threads.js';
import { UserMaps } from '../../session/user-maps.js';
import { SampleReadSplitter } from '../../session/sample-read.js';
import { UsageError } from '../errors.js';
import { withProgress } from './stats.js';
import type { Symbolizer } from '../../machine/symbolizer.js';

/**
 * `perfpoke script -i F [-F fields] [--show-*-events] [--json]`: the lines of
 * perf 6.1's `perf script` for the symbol-free fields (builtin-script.c
 * perf_sample__fprintf_start / process_event, and perf_event__fprintf for the
 * --show-*-events records), in perf's delivery order.
 */

/** The -F fields we print; perf's names (builtin-script.c all_output_options). */
export const SCRIPT_FIELDS = ['comm', 'tid', 'pid', 'cpu', 'time', 'period', 'event', 'ip', 'addr'] as const;
export type ScriptField = (typeof SCRIPT_FIELDS)[number];

/** builtin-script.c output[] defaults, minus sym/dso/symoff (which need symbols). */
const DEFAULT_FIELDS: ScriptField[] = ['comm', 'tid', 'cpu', 'time', 'event', 'ip', 'period'];
const DEFAULT_TRACEPOINT_FIELDS: ScriptField[] = ['comm', 'tid', 'cpu', 'time', 'event'];

export interface ScriptOptions {
  fields?: ScriptField[];
  showTaskEvents?: boolean;
  showMmapEvents?: boolean;
  showSwitchEvents?: boolean;
  showTextPokeEvents?: boolean;
  showBpfEvents?: boolean;
  showNamespaceEvents?: boolean;
  showCgroupEvents?: boolean;
  showLostEvents?: boolean;
  showRoundEvents?: boolean;
  json?: boolean;
}

/** perf's output_type(): one field set per attr type class. */
function outputType(attrType: number): number {
  return attrType < 6 ? attrType : 6;
}

export function parseFields(spec: string): ScriptField[] {
  const out: ScriptField[] = [];
  for (const f of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (f.includes(':')) throw new UsageError(`-F ${f}: per-type field lists ("type:fields") are not supported`);
    if (!(SCRIPT_FIELDS as readonly string[]).includes(f)) {
      throw new UsageError(
        `-F: field '${f}' is not supported (supported: ${SCRIPT_FIELDS.join(',')}; symbol fields need symbols)`,
      );
    }
    out.push(f as ScriptField);
  }
  return out;
}

interface FieldSet {
  has: Set<ScriptField>;
  /** perf: comm is printed unpadded when ip and a callchain are printed. */
  callchain: boolean;
}

/**
 * perf_session__check_output_opt / process_attr → evsel__check_attr, for the
 * first attr of each type class: a field the user asked for that the event
 * cannot give is an error with perf's wording; a default field it cannot give
 * is dropped. Dummy events and attrs without sample_type are not checked.
 */
function checkAttr(s: Session, i: number, userFields: ScriptField[] | undefined, fs: FieldSet): void {
  const a = s.file.attrs[i]!.attr;
  const isDummy = a.type === PerfType.SOFTWARE && a.config === 9n;
  if (isDummy || s.file.featureSection(Feature.STAT) !== undefined) return;
  if (s.file.pipe && a.sampleType === 0n) return;
  const allowUserSet = s.file.featureSection(Feature.AUXTRACE) !== undefined;
  const has = fs.has;
  const st = a.sampleType;
  const user = userFields !== undefined;
  const check = (fields: ScriptField[], bit: bigint, msg: string, fieldName: string, allow = false): void => {
    if (!fields.some((f) => has.has(f)) || (st & bit) !== 0n) return;
    if (user) {
      if (allow) return;
      throw new UsageError(
        `Samples for '${s.eventNameAt(i)}' event do not have ${msg} attribute set. Cannot print '${fieldName}' field.`,
      );
    }
    for (const f of fields) has.delete(f);
  };
  check(['ip'], SampleType.IP, 'IP', 'ip');
  check(['addr'], SampleType.ADDR, 'ADDR', 'addr', allowUserSet);
  check(['pid', 'tid'], SampleType.TID, 'TID', '');
  check(['time'], SampleType.TIME, 'TIME', 'time');
  check(['cpu'], SampleType.CPU, 'CPU', 'cpu', allowUserSet);
}

function defaultFieldsFor(attrType: number): ScriptField[] {
  return attrType === PerfType.TRACEPOINT ? DEFAULT_TRACEPOINT_FIELDS : DEFAULT_FIELDS;
}

/** C's "%0Nd": the sign comes before the zeros. */
function zeroPad(n: number, w: number): string {
  return n < 0 ? '-' + String(-n).padStart(w - 1, '0') : String(n).padStart(w, '0');
}

const USEC_DIV = 1000n;
const NSEC_PER_SEC = 1000000000n;

/** timestamp__scnprintf_usec: "secs.usecs". */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function formatTime(t: bigint): string {
  if (t <= SAFE) {
    // exact in a double below 2^53 ns (104 days of uptime), and much cheaper than BigInt division
    const n = Number(t);
    let secs = Math.floor(n / 1e9);
    if (n - secs * 1e9 < 0) secs--; // n/1e9 can round up to the next integer just below it
    const usecs = Math.floor((n - secs * 1e9) / 1000);
    return `${secs}.${usecs < 100000 ? String(usecs).padStart(6, '0') : usecs}`;
  }
  const secs = t / NSEC_PER_SEC;
  const usecs = (t % NSEC_PER_SEC) / USEC_DIV;
  return `${secs}.${usecs.toString().padStart(6, '0')}`;
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16);

const CONTEXTS = new Set([
  PERF_CONTEXT_HV,
  PERF_CONTEXT_KERNEL,
  PERF_CONTEXT_USER,
  PERF_CONTEXT_GUEST,
  PERF_CONTEXT_GUEST_KERNEL,
  PERF_CONTEXT_GUEST_USER,
]);
/** perf's PERF_MAX_STACK_DEPTH, the default --max-stack of perf script. */
const MAX_STACK = 127;

/**
 * thread__resolve_callchain_sample without symbols: context markers switch
 * between kernel and user space and are not printed, an unknown marker
 * discards the whole chain, at most 127 entries. A user-space entry prints as
 * its offset in the mapped file when a map covers it (sample__fprintf_callchain).
 */
export function resolveCallchain(chain: bigint[], userAddress: (ip: bigint) => bigint = (ip) => ip): bigint[] {
  const out: bigint[] = [];
  let user = true; // perf starts in PERF_RECORD_MISC_USER
  for (const ip of chain) {
    if (out.length >= MAX_STACK) break;
    if (ip >= PERF_CONTEXT_MAX) {
      if (ip === PERF_CONTEXT_KERNEL) user = false;
      else if (ip === PERF_CONTEXT_USER) user = true;
      else if (!CONTEXTS.has(ip)) return [];
      else user = false;
      continue;
    }
    out.push(user ? userAddress(ip) : ip);
  }
  return out;
}

interface SampleFields {
  pid: number;
  tid: number;
  cpu: number;
  time: bigint;
}

const NO_U64 = BigInt.asUintN(64, -1n);

/** The script printer: keeps perf's thread names and writes perf's lines. */
export class ScriptPrinter {
  private readonly s: Session;
  private readonly opts: ScriptOptions;
  private readonly threads = new ThreadComms();
  private readonly maps = new UserMaps();
  private nameWidth = -1;
  private readonly out: (s: string) => void;

  /** Kernel symbols for TEXT_POKE lines (perf prints "sym+0xoff" when it has them). */
  symbolizer: Symbolizer | undefined;

  constructor(s: Session, opts: ScriptOptions, out: (s: string) => void) {
    this.s = s;
    this.opts = opts;
    this.out = out;
    this.splitter = new SampleReadSplitter(s);
    this.checkNewAttrs();
  }

  private checked = 0;
  /** User maps are only needed to print callchains. */
  private get needMaps(): boolean {
    return this.s.file.attrs.some((a) => (a.attr.sampleType & SampleType.CALLCHAIN) !== 0n);
  }
  private readonly fieldsByType = new Map<number, FieldSet>();

  /** Check attrs not seen yet (file mode: all at start; pipe mode: as HEADER_ATTR records pass). */
  private checkNewAttrs(): void {
    const attrs = this.s.file.attrs;
    for (; this.checked < attrs.length; this.checked++) {
      const i = this.checked;
      const a = attrs[i]!.attr;
      const ot = outputType(a.type);
      const hasChain = (a.sampleType & SampleType.CALLCHAIN) !== 0n;
      let fs = this.fieldsByType.get(ot);
      if (!fs) {
        fs = { has: new Set(this.opts.fields ?? defaultFieldsFor(a.type)), callchain: false };
        this.fieldsByType.set(ot, fs);
        checkAttr(this.s, i, this.opts.fields, fs);
        // process_attr (pipe mode) turns ip on for events with callchains
        if (this.s.file.pipe && hasChain) fs.has.add('ip');
      }
      if (hasChain) fs.callchain = true;
    }
  }

  private fieldsFor(raw: RawRecord): FieldSet | undefined {
    // pipe mode: the reader files a HEADER_ATTR only after handing it out
    if (this.checked < this.s.file.attrs.length) this.checkNewAttrs();
    const a = this.s.attrOf(raw) ?? this.s.file.attrs[0];
    if (!a) return undefined;
    return this.fieldsByType.get(outputType(a.attr.type));
  }

  /** perf_sample__fprintf_start. `callchainComm`: comm unpadded (sample with ip + callchain). */
  private start(fs: FieldSet, comm: string | undefined, sf: SampleFields, callchainComm: boolean): string {
    const f = fs.has;
    let line = '';
    if (f.has('comm')) {
      const c = comm ?? ':-1';
      line += callchainComm ? `${c} ` : `${c.padStart(16)} `;
    }
    if (f.has('pid') && f.has('tid')) line += `${String(sf.pid).padStart(5)}/${String(sf.tid).padEnd(5)} `;
    else if (f.has('pid')) line += `${String(sf.pid).padStart(5)} `;
    else if (f.has('tid')) line += `${String(sf.tid).padStart(5)} `;
    if (f.has('cpu')) line += `[${zeroPad(sf.cpu, 3)}] `;
    if (f.has('time')) line += `${formatTime(sf.time).padStart(12)}: `;
    return line;
  }

  private width(): number {
    if (this.nameWidth < 0) this.nameWidth = Math.max(0, ...this.s.eventNames().map((n) => n.length));
    return this.nameWidth;
  }

  /** Handle one record in delivery order. */
  handle(raw: RawRecord): void {
    const t = raw.type;
    if (t === RecordType.SAMPLE) return this.sample(raw);
    if (t >= RecordType.HEADER_ATTR) {
      if (t === RecordType.FINISHED_ROUND && this.opts.showRoundEvents) this.emitOther(raw, undefined, undefined);
      return;
    }
    const o = this.opts;
    switch (t) {
      case RecordType.COMM: {
        const rec = raw.decode() as Extract<PerfRecord, { kind: 'comm' }>;
        this.threads.onComm(rec.pid, rec.tid, rec.comm);
        if (o.showTaskEvents) this.emitOther(raw, rec, [rec.pid, rec.tid]);
        return;
      }
      case RecordType.FORK: {
        const rec = raw.decode() as Extract<PerfRecord, { kind: 'fork' }>;
        this.threads.onFork(rec.pid, rec.tid, rec.ppid, rec.ptid);
        this.maps.onFork(rec.pid, rec.ppid);
        if (o.showTaskEvents) this.emitOther(raw, rec, [rec.pid, rec.tid], rec.time);
        return;
      }
      case RecordType.EXIT: {
        if (o.showTaskEvents) {
          const rec = raw.decode() as Extract<PerfRecord, { kind: 'exit' }>;
          this.emitOther(raw, rec, [rec.pid, rec.tid], rec.time);
        }
        return;
      }
      case RecordType.MMAP:
      case RecordType.MMAP2: {
        const cpumode = raw.misc & PERF_RECORD_MISC_CPUMODE_MASK;
        const kernel = cpumode === PERF_RECORD_MISC_KERNEL || cpumode === PERF_RECORD_MISC_GUEST_KERNEL;
        if (!o.showMmapEvents && (kernel || !this.needMaps)) return;
        const rec = raw.decode() as Extract<PerfRecord, { kind: 'mmap' | 'mmap2' }>;
        if (!kernel && this.needMaps) this.maps.onMmap(rec.pid, rec.addr, rec.len, rec.pgoff, rec.filename);
        if (o.showMmapEvents) this.emitOther(raw, rec, [rec.pid, rec.tid]);
        return;
      }
      case RecordType.SWITCH:
      case RecordType.SWITCH_CPU_WIDE:
        if (o.showSwitchEvents) this.emitOther(raw, raw.decode(), 'sample');
        return;
      case RecordType.NAMESPACES:
        if (o.showNamespaceEvents) {
          const rec = raw.decode() as Extract<PerfRecord, { kind: 'namespaces' }>;
          this.emitOther(raw, rec, [rec.pid, rec.tid]);
        }
        return;
      case RecordType.LOST:
        if (o.showLostEvents) this.emitOther(raw, raw.decode(), 'sample');
        return;
      case RecordType.KSYMBOL:
        if (o.showBpfEvents || o.showTextPokeEvents) this.emitOther(raw, raw.decode(), 'sample');
        return;
      case RecordType.BPF_EVENT:
        if (o.showBpfEvents) this.emitOther(raw, raw.decode(), 'sample');
        return;
      case RecordType.CGROUP:
        if (o.showCgroupEvents) this.emitOther(raw, raw.decode(), 'sample');
        return;
      case RecordType.TEXT_POKE: {
        // decoded even when not shown: a malformed poke (old_len + new_len past the record) is an error
        const rec = raw.decode();
        if (o.showTextPokeEvents) this.emitOther(raw, rec, 'sample');
        return;
      }
      default:
        return;
    }
  }

  /**
   * print_event_with_time: the sample_id trailer gives pid/tid/cpu/time (or,
   * without sample_id_all, 0 / the record's own pid/tid/time); the comm is
   * that of the record's thread (`who`), or of the trailer's for 'sample'.
   */
  private emitOther(
    raw: RawRecord,
    rec: PerfRecord | undefined,
    who: [number, number] | 'sample' | undefined,
    ownTime = 0n,
  ): void {
    if (rec === undefined) {
      // user records (FINISHED_ROUND): no sample, no thread, just the name
      if (this.opts.json) this.out(JSON.stringify({ type: 'finished_round', offset: raw.fileOffset }) + '\n');
      else this.out(formatPerfEvent({ kind: 'finished_round', type: raw.type, misc: raw.misc }));
      return;
    }
    const a = this.s.attrOf(raw) ?? this.s.file.attrs[0];
    const sid = (rec as { sampleId?: { pid?: number; tid?: number; cpu?: number; time?: bigint } }).sampleId;
    let sf: SampleFields = { pid: sid?.pid ?? -1, tid: sid?.tid ?? -1, cpu: sid?.cpu ?? -1, time: sid?.time ?? NO_U64 };
    let pid = sf.pid;
    let tid = sf.tid;
    if (Array.isArray(who)) [pid, tid] = who;
    if (a && !attrFlag(a.attr, 'sample_id_all')) sf = { pid, tid, cpu: 0, time: ownTime };
    const comm = tid !== -1 ? this.threads.comm(pid, tid) : undefined;
    const fs = this.fieldsFor(raw);
    if (this.opts.json) {
      this.out(
        JSON.stringify({
          type: rec.kind,
          offset: raw.fileOffset,
          comm,
          pid: sf.pid,
          tid: sf.tid,
          cpu: sf.cpu,
          time: sf.time === NO_U64 ? null : sf.time.toString(),
          text: formatPerfEvent(rec).trimEnd(),
        }) + '\n',
      );
      return;
    }
    const head = fs ? this.start(fs, comm, sf, false) : '';
    let textPokeSymbol: string | undefined;
    if (rec.kind === 'text_poke' && this.symbolizer) {
      textPokeSymbol = this.symbolizer.symOff(rec.addr, { time: rec.sampleId?.time ?? 0n, fileOffset: rec.fileOffset });
    }
    this.out(head + formatPerfEvent(rec, { textPokeSymbol }));
  }

  private readonly splitter: SampleReadSplitter;

  private sample(raw: RawRecord): void {
    const a0 = this.s.attrOf(raw);
    if (a0 && SampleReadSplitter.applies(a0.attr)) {
      const rec = raw.decode() as Extract<PerfRecord, { kind: 'sample' }>;
      for (const d of this.splitter.split(rec, a0.attr)) this.printSample(raw, rec, d.attrIndex, d.period);
      return;
    }
    this.printSample(raw, undefined, this.s.attrIndexOf(raw), undefined);
  }

  private printSample(
    raw: RawRecord,
    decoded: Extract<PerfRecord, { kind: 'sample' }> | undefined,
    attrIndex: number,
    periodOverride: bigint | undefined,
  ): void {
    if (this.checked < this.s.file.attrs.length) this.checkNewAttrs();
    const entry = this.s.file.attrs[attrIndex];
    const fs = entry ? this.fieldsByType.get(outputType(entry.attr.type)) : this.fieldsFor(raw);
    if (!fs || fs.has.size === 0) return;
    const rec = decoded ?? (raw.decode() as Extract<PerfRecord, { kind: 'sample' }>);
    const a = entry;
    const sf: SampleFields = { pid: rec.pid ?? -1, tid: rec.tid ?? -1, cpu: rec.cpu ?? -1, time: rec.time ?? NO_U64 };
    const comm = this.threads.comm(sf.pid, sf.tid);
    const f = fs.has;
    const period = periodOverride ?? rec.period ?? a?.attr.samplePeriod ?? 0n;
    const chain =
      f.has('ip') && rec.callchain
        ? resolveCallchain(rec.callchain, (ip) => this.maps.printedAddress(sf.pid, ip))
        : undefined;
    const name = attrIndex >= 0 ? this.s.eventNameAt(attrIndex) : '[unknown]';
    if (this.opts.json) {
      const o: Record<string, unknown> = { type: 'sample', offset: raw.fileOffset };
      if (f.has('comm')) o.comm = comm;
      if (f.has('pid')) o.pid = sf.pid;
      if (f.has('tid')) o.tid = sf.tid;
      if (f.has('cpu')) o.cpu = sf.cpu;
      if (f.has('time')) o.time = sf.time.toString();
      if (f.has('period')) o.period = period.toString();
      if (f.has('event')) o.event = name;
      if (f.has('addr')) o.addr = '0x' + (rec.addr ?? 0n).toString(16);
      if (f.has('ip')) o.ip = '0x' + (rec.ip ?? 0n).toString(16);
      if (chain) o.callchain = chain.map((x) => '0x' + x.toString(16));
      this.out(JSON.stringify(o) + '\n');
      return;
    }
    let line = this.start(fs, comm, sf, f.has('ip') && fs.callchain);
    if (f.has('period')) line += `${period.toString().padStart(10)} `;
    if (f.has('event')) line += `${name.padStart(this.width())}: `;
    if (f.has('addr')) line += hex16(rec.addr ?? 0n);
    if (f.has('ip')) {
      if (chain) {
        line += '\n';
        for (const ip of chain) line += `\t${hex16(ip)}\n`;
      } else {
        line += ' ' + hex16(rec.ip ?? 0n);
      }
    }
    this.out(line + '\n');
  }
}

/** Where script output goes: stdout (OutputBuffer) or a string (tests, benches). */
export interface ScriptSink {
  write: (s: string) => void;
  readonly pending: number;
  flush(): Promise<void>;
}

/** Collects the output in memory. */
export class StringSink implements ScriptSink {
  private parts: string[] = [];
  write = (s: string): void => {
    this.parts.push(s);
  };
  readonly pending = 0;
  async flush(): Promise<void> {}
  get text(): string {
    return this.parts.join('');
  }
}

/** Buffered stdout writer that honours backpressure. */
export class OutputBuffer implements ScriptSink {
  private parts: string[] = [];
  private bytes = 0;
  write = (s: string): void => {
    this.parts.push(s);
    this.bytes += s.length;
  };
  get pending(): number {
    return this.bytes;
  }
  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.bytes = 0;
    if (!process.stdout.write(chunk)) {
      await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
    }
  }
}

/** The whole command, as a library call (tests and benches use it in-process). */
export async function runScript(input: string, opts: ScriptOptions, out?: ScriptSink): Promise<void> {
  // perf -i accepts a `perf record --kcore` directory (data + kcore_dir)
  const dataFile = input === '-' ? input : (await import('../../machine/kcore-dir.js')).resolveInput(input).dataFile;
  const s = await openSession(dataFile, { ordered: !opts.showRoundEvents });
  const buf = out ?? new OutputBuffer();
  try {
    const p = new ScriptPrinter(s, opts, buf.write);
    // loaded only when needed: the machine layer pulls in kcore and disassembly support
    if (opts.showTextPokeEvents && input !== '-')
      p.symbolizer = (await (await import('../../machine/from-perf-data.js')).loadMachine(input)).symbolizer;
    await withProgress(s, async (tick) => {
      let n = 0;
      for await (const raw of s.events()) {
        try {
          p.handle(raw);
        } catch (e) {
          throw s.named(e);
        }
        if (buf.pending > 1 << 16) await buf.flush();
        if ((++n & 0xffff) === 0) tick(raw.fileOffset);
      }
    });
    await buf.flush();
  } finally {
    await s.close();
  }
}

export function register(program: Command): void {
  program
    .command('script')
    .description('print samples and side-band records as `perf script` does (symbol-free fields), in time order')
    .requiredOption('-i, --input <file>', 'perf.data file (file or pipe mode; - for stdin)')
    .option('-F, --fields <list>', `comma-separated fields: ${SCRIPT_FIELDS.join(',')}`)
    .option('--show-task-events', 'print COMM, FORK and EXIT records')
    .option('--show-mmap-events', 'print MMAP and MMAP2 records')
    .option('--show-switch-events', 'print SWITCH and SWITCH_CPU_WIDE records')
    .option('--show-text-poke-events', 'print TEXT_POKE and KSYMBOL records')
    .option('--show-bpf-events', 'print KSYMBOL and BPF_EVENT records')
    .option('--show-namespace-events', 'print NAMESPACES records')
    .option('--show-cgroup-events', 'print CGROUP records')
    .option('--show-lost-events', 'print LOST records')
    .option('--show-round-events', 'print FINISHED_ROUND records (delivery in file order, as perf)')
    .option('--json', 'one JSON object per line instead of text')
    .action(async (o: { input: string; fields?: string } & ScriptOptions) => {
      const opts: ScriptOptions = { ...o, fields: o.fields !== undefined ? parseFields(o.fields) : undefined };
      await runScript(o.input, opts);
    });
}
