/**
 * perf 6.1's `perf script` lines (builtin-script.c process_event, perf_event__fprintf for --show-*-events;
 * symbols: script-symbols.ts, filters: script-filters.ts) and their JSON Lines form. `ScriptPrinter` keeps
 * what perf keeps between records (threads, user maps, fields per type); `formatScript` prints one sample.
 */
import { attrFlag, PerfType } from '../abi/event-attr.js';
import { FormatOptionError } from './errors.js';
import {
  RecordType,
  PERF_RECORD_MISC_CPUMODE_MASK,
  PERF_RECORD_MISC_KERNEL,
  PERF_RECORD_MISC_GUEST_KERNEL,
  PERF_RECORD_MISC_GUEST_USER,
} from '../abi/record-type.js';
import { SampleType } from '../abi/sample-format.js';
import { callchainEntries } from './script-callchain.js';
import type { AttrLayout, PerfRecord, RawRecord, SampleRecord } from '../perfdata/index.js';
import type { Session } from '../session/session.js';
import { formatPerfEvent } from './perf-event-text.js';
import { ThreadComms } from '../session/threads.js';
import { UserMaps } from '../session/user-maps.js';
import { SampleReadSplitter } from '../session/sample-read.js';
import type { Symbolizer } from '../machine/symbolizer.js';
import { ScriptFilter } from './script-filters.js';
import { addrColumns, ScriptSymbols, symbolColumns } from './script-symbols.js';
import { type ChainEntry, dwarfUnwinds, ScriptUnwinder } from './script-unwind.js';
import { ksymbolEvent } from './script-ksymbols.js';
import { StatScript } from './script-stat.js';
import { perfSampleId } from './script-sample-id.js';
import { DsoSymbols } from '../machine/dso-symbols.js';
import { jsonLine, jsonTime } from './json-lines.js';
import type { TypeFields } from './script-field-specs.js';
import {
  checkAttr,
  EXTRA_FIELDS,
  checkPrintable,
  fieldsPerType,
  outputType,
  tracepointChainDefaults,
  type FieldSet,
  type ScriptField,
  type ScriptOptions,
} from './perf-script-fields.js';
import { parseTracingData, type TracingData } from '../perfdata/tracing/tracing-data.js';
import { TracePayloads } from './trace-payload.js';
import {
  NO_U64,
  type SampleFields,
  type SampleLine,
  sampleJson,
  sampleText,
  scriptStart,
  type StartColumns,
} from './script-sample-text.js';
import { type FastAttr, type FastContext, FastLines, fastAttr } from './script-fast.js';
import { KERNEL_SPACE } from './script-fast-chain.js';
import type { TextSink } from './text-sink.js';
import { extrasJson, miscColumn, SampleExtras } from './script-sample-extra.js';
import { ScriptTimes } from './script-time.js';
import { branchKind, brstackText } from './script-brstack.js';

export { callchainEntries, resolveCallchain } from './script-callchain.js';

export { formatScript, type FormatScriptOptions } from './script-sample-text.js';

/** Fields other than sym/dso that look addresses up in the process's maps. */
const MAP_FIELDS = ['brstack', 'brstacksym', 'brstackoff', 'insn', 'insnlen'] as const;

/**
 * perf script runs without --guest: thread__find_map marks a guest sample
 * filtered (HIST_FILTER__GUEST) and process_sample_event drops it.
 */
function guestMode(cpumode: number): boolean {
  return cpumode === PERF_RECORD_MISC_GUEST_KERNEL || cpumode === PERF_RECORD_MISC_GUEST_USER;
}

/** The script printer: keeps perf's thread names and writes perf's lines. */
export class ScriptPrinter {
  private readonly s: Session;
  private readonly opts: ScriptOptions;
  private readonly threads = new ThreadComms();
  private readonly maps = new UserMaps();
  private nameWidth = -1;
  private readonly out: (s: string) => void;
  /** The output: strings through `out`, fast lines straight into its bytes. */
  private readonly sink: TextSink;

  /** --cpu/--pid/--tid/--comm/--time (none by default). */
  filter = new ScriptFilter();

  /** Where symbols come from (the CLI passes the recording's build-ids; default: none known). */
  dsoSymbols: DsoSymbols | undefined;
  private symbolResolver: ScriptSymbols | undefined;
  private symbols(): ScriptSymbols {
    this.symbolResolver ??= new ScriptSymbols(this.dsoSymbols ?? new DsoSymbols({ buildIds: new Map() }), this.maps);
    return this.symbolResolver;
  }
  /** `--call-graph dwarf` recordings (pipe mode: known once such an attr has passed): the user frames. */
  private unwinder: ScriptUnwinder | undefined;
  private dwarf(): ScriptUnwinder | undefined {
    if (!this.unwinder && this.s.file.attrs.some((x) => dwarfUnwinds(x.attr)))
      this.unwinder = new ScriptUnwinder(this.maps, () => this.symbols());
    return this.unwinder;
  }
  /** Some event type prints sym or dso: user maps and the kernel map are needed. */
  private wantSymbols = false;

  /** The recording's tracepoint formats (file mode: the CLI reads HEADER_TRACING_DATA; pipe mode: its record). */
  set tracingData(td: TracingData | undefined) {
    this.payloads = td ? new TracePayloads(td, (a) => this.symbols().kernelFunction(a)) : undefined;
  }
  /**
   * Pipe mode: perf sets its kernel function resolver before the tracing data
   * arrives, so it is never set: %pS / %ps print bare addresses.
   */
  private pipeTracingData(td: TracingData): void {
    this.payloads = new TracePayloads(td, () => undefined);
  }
  private payloads: TracePayloads | undefined;

  /** Kernel symbols for TEXT_POKE lines (perf prints "sym+0xoff" when it has them). */
  symbolizer: Symbolizer | undefined;

  constructor(s: Session, opts: ScriptOptions, sink: TextSink) {
    this.s = s;
    this.opts = opts;
    this.sink = sink;
    this.out = sink.write;
    this.splitter = new SampleReadSplitter(s);
    this.times = new ScriptTimes(opts, undefined);
    this.perType = fieldsPerType(opts);
    this.checkNewAttrs();
  }

  private checked = 0;
  /** User maps are only needed to print callchains. */
  private get needMaps(): boolean {
    return this.wantSymbols || this.s.file.attrs.some((a) => (a.attr.sampleType & SampleType.CALLCHAIN) !== 0n);
  }
  private readonly fieldsByType = new Map<number, FieldSet>();
  /** The -F options resolved per output type, before checking them against the events. */
  private readonly perType: TypeFields[];

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
        const tf = this.perType[ot]!;
        fs = { has: new Set(tf.has), callchain: false };
        this.fieldsByType.set(ot, fs);
        checkAttr(this.s, i, tf.userSet, fs);
        checkPrintable(fs, tf.userSet, this.opts.json === true);
        // %pS in tracepoint payloads names kernel functions: the kernel map is needed too
        const has = fs.has;
        if (symbolColumns(has) || has.has('trace') || MAP_FIELDS.some((x) => has.has(x))) this.wantSymbols = true;
        // process_attr (pipe mode) turns ip on for events with callchains
        if (this.s.file.pipe && hasChain) fs.has.add('ip');
      }
      if (hasChain) fs.callchain = true;
      if (hasChain && tracepointChainDefaults(fs, this.opts, a.type)) this.wantSymbols = true;
    }
  }

  private fieldsFor(raw: RawRecord): FieldSet | undefined {
    // pipe mode: the reader files a HEADER_ATTR only after handing it out
    if (this.checked < this.s.file.attrs.length) this.checkNewAttrs();
    const a = this.s.attrOf(raw) ?? this.s.file.attrs[0];
    if (!a) return undefined;
    return this.fieldsByType.get(outputType(a.attr.type));
  }

  private width(): number {
    if (this.nameWidth < 0) this.nameWidth = Math.max(0, ...this.s.eventNames().map((n) => n.length));
    return this.nameWidth;
  }

  /** Handle one record in delivery order. */
  handle(raw: RawRecord): void {
    const t = raw.type;
    if (t === RecordType.SAMPLE) {
      this.sample(raw);
      return;
    }
    if (t >= RecordType.HEADER_ATTR) {
      if (t === RecordType.FINISHED_ROUND && this.opts.showRoundEvents) this.emitOther(raw, undefined, undefined);
      if (t === RecordType.HEADER_TRACING_DATA && raw.auxData)
        this.pipeTracingData(parseTracingData(raw.auxData, raw.fileOffset + raw.size));
      // perf stat record files: the counts at each STAT_ROUND (script-stat.ts)
      if (t >= RecordType.THREAD_MAP && t <= RecordType.EVENT_UPDATE) this.stat.handle(raw.decode(), this.opts.json);
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
        this.fast.invalidate(rec.pid); // the child's maps become a copy of the parent's
        this.threads.onFork(rec.pid, rec.tid, rec.ppid, rec.ptid);
        this.maps.onFork(rec.pid, rec.ppid);
        this.dwarf()?.onFork(rec.pid, rec.ppid);
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
        if (this.checked < this.s.file.attrs.length) this.checkNewAttrs(); // pipe mode: do we want symbols?
        if (!o.showMmapEvents && ((kernel && !this.wantSymbols) || !this.needMaps)) return;
        const rec = raw.decode() as Extract<PerfRecord, { kind: 'mmap' | 'mmap2' }>;
        this.fast.invalidate(kernel ? KERNEL_SPACE : rec.pid);
        if (!kernel && this.needMaps) this.maps.onMmapRecord(rec);
        if (!kernel) this.dwarf()?.onMmap(rec.pid, rec.filename);
        if (kernel && this.wantSymbols) this.symbols().onKernelMmap(rec.filename, rec.addr, rec.len);
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
      case RecordType.KSYMBOL: {
        const rec = raw.decode() as Extract<PerfRecord, { kind: 'ksymbol' }>;
        this.fast.invalidate(KERNEL_SPACE);
        if (this.wantSymbols) ksymbolEvent(this.symbols().ksymbols, rec);
        if (o.showBpfEvents || o.showTextPokeEvents) this.emitOther(raw, rec, 'sample');
        return;
      }
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
      if (this.opts.json) this.out(jsonLine({ type: 'event', kind: 'finished_round', offset: raw.fileOffset }));
      else this.out(formatPerfEvent({ kind: 'finished_round', type: raw.type, misc: raw.misc }));
      return;
    }
    const a = this.s.attrOf(raw) ?? this.s.file.attrs[0];
    const sid = perfSampleId(raw, rec);
    if (this.filter.cpuSkipped(sid?.cpu)) return;
    let sf: SampleFields = { pid: sid?.pid ?? -1, tid: sid?.tid ?? -1, cpu: sid?.cpu ?? -1, time: sid?.time ?? NO_U64 };
    let pid = sf.pid;
    let tid = sf.tid;
    if (Array.isArray(who)) [pid, tid] = who;
    if (a && !attrFlag(a.attr, 'sample_id_all')) sf = { pid, tid, cpu: 0, time: ownTime };
    const comm = tid !== -1 ? this.threads.comm(pid, tid) : undefined;
    const fs = this.fieldsFor(raw);
    let textPokeSymbol: string | undefined;
    if (rec.kind === 'text_poke' && this.symbolizer) {
      textPokeSymbol = this.symbolizer.symOff(rec.addr, { time: rec.sampleId?.time ?? 0n, fileOffset: rec.fileOffset });
    }
    const text = formatPerfEvent(rec, { textPokeSymbol });
    if (this.opts.json) {
      const { time, ...ids } = sf;
      const t = time === NO_U64 ? {} : jsonTime(time);
      this.out(
        jsonLine({ type: 'event', kind: rec.kind, offset: raw.fileOffset, comm, ...ids, ...t, text: text.trimEnd() }),
      );
      return;
    }
    // perf_sample__fprintf_start: comm unpadded when this event prints ip with its callchain
    const unpadded = fs ? fs.has.has('ip') && fs.callchain && !this.opts.hideCallGraph : false;
    if (!fs) {
      this.out(text);
      return;
    }
    const start = this.startColumns(fs.has, raw, sf.time);
    if (fs.has.has('time')) sf = { ...sf, time: this.times.shown(sf.time) };
    this.out(scriptStart(fs.has, comm, sf, unpadded, this.opts.ns, start) + text);
  }

  private readonly splitter: SampleReadSplitter;
  private statScript: StatScript | undefined;
  private get stat(): StatScript {
    this.statScript ??= new StatScript(this.s, this.out);
    return this.statScript;
  }

  /** perf prints the payload of a tracepoint sample that has RAW data; no tracing data: refused. */
  private trace(attr: { type: number; config: bigint } | undefined, rec: SampleRecord): string | undefined {
    if (!attr || attr.type !== PerfType.TRACEPOINT || !rec.raw) return undefined;
    if (!this.payloads) throw new FormatOptionError('-F trace: the file has no tracing data (HEADER_TRACING_DATA)');
    return this.payloads.text(Number(attr.config), rec.raw);
  }

  private sample(raw: RawRecord): void {
    const a0 = this.s.attrOf(raw);
    if (a0 && SampleReadSplitter.applies(a0.attr)) {
      const rec = raw.decode() as Extract<PerfRecord, { kind: 'sample' }>;
      for (const d of this.splitter.split(rec, a0.attr)) this.printSample(raw, rec, d.attrIndex, d.period);
      return;
    }
    const i = this.s.attrIndexOf(raw);
    if (!this.fastSample(raw, i)) this.printSample(raw, undefined, i, undefined);
  }

  /** Plain samples printed from their bytes (script-fast.ts); false: the general path must print it. */
  private readonly fast = new FastLines();
  private readonly fastCtx: FastContext = {
    kernel: false,
    event: '',
    eventWidth: 0,
    unpaddedComm: false,
    ns: false,
    withChain: false,
    comm: (pid: number, tid: number): string => this.threads.comm(pid, tid),
    skip: undefined,
    cols: undefined,
    syms: undefined,
    maxStack: 127,
    printed: (pid: number, ip: bigint): bigint => this.maps.printedAddress(pid, ip),
  };
  /** Per attr index: what fastSample works out once (the plan, the fields as bits), or null: general path. */
  private fastByAttr: (FastAttr | null | undefined)[] = [];
  private fastAttrAt(L: AttrLayout, attrIndex: number): FastAttr | null {
    if (this.checked < this.s.file.attrs.length) {
      this.checkNewAttrs();
      this.fastByAttr = [];
    }
    const known = this.fastByAttr[attrIndex];
    if (known !== undefined && (known === null || known.layout === L)) return known;
    const entry = this.s.file.attrs[attrIndex];
    const fs = entry ? this.fieldsByType.get(outputType(entry.attr.type)) : undefined;
    const fa = fastAttr(L, fs, entry?.attr, this.opts.hideCallGraph === true);
    if (attrIndex >= 0) this.fastByAttr[attrIndex] = fa;
    // the options and filters are fixed once samples flow
    const c = this.fastCtx;
    c.withChain = this.opts.hideCallGraph !== true;
    c.maxStack = this.opts.maxStack ?? 127;
    c.ns = this.opts.ns === true;
    c.skip = this.filter.idSkip;
    return fa;
  }
  private fastSample(raw: RawRecord, attrIndex: number): boolean {
    const L = raw.layout;
    if (!L || this.opts.json || this.filter.ranges.length || this.times.shifted) return false;
    const fa = this.fastAttrAt(L, attrIndex);
    if (!fa) return false;
    const c = this.fastCtx;
    const cpumode = raw.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (guestMode(cpumode)) return true;
    c.kernel = cpumode === PERF_RECORD_MISC_KERNEL || cpumode === PERF_RECORD_MISC_GUEST_KERNEL;
    c.event = this.s.eventNameAt(attrIndex);
    c.eventWidth = this.width();
    c.unpaddedComm = fa.unpaddedComm;
    c.cols = fa.cols;
    c.syms = fa.cols ? this.symbols() : undefined;
    if (!this.fast.line(raw.buf, raw.off, raw.length, raw.le, fa.plan, fa.fields, c, this.sink.bytes)) return false;
    this.sink.wrote();
    return true;
  }
  private readonly extras = new SampleExtras();
  /** --reltime / --deltatime and the tod field; the CLI sets the clock from HEADER_CLOCK_DATA. */
  times: ScriptTimes;
  private startColumns(f: ReadonlySet<ScriptField>, raw: RawRecord, time: bigint): StartColumns {
    return {
      misc: f.has('misc') ? miscColumn(raw.misc, raw.type) : undefined,
      tod: f.has('tod') ? this.times.tod(time, this.opts.ns === true) : undefined,
    };
  }
  private extraFields(f: ReadonlySet<ScriptField>): boolean {
    for (const x of EXTRA_FIELDS) if (x !== 'misc' && f.has(x)) return true;
    return false;
  }
  private brstack(f: ReadonlySet<ScriptField>, pid: number, rec: SampleRecord, kernelIp: boolean): string | undefined {
    const kind = branchKind(f);
    if (!kind || !rec.branchStack) return undefined;
    const syms = this.symbols();
    // machine__resolve looks the sample's ip up by its cpumode, loading that file's symbols
    syms.touch(pid, rec.ip ?? 0n, kernelIp);
    const withSym = kind === 'brstacksym';
    return brstackText(kind, rec.branchStack.entries, f.has('dso'), (a) => syms.branchAddr(pid, a, withSym));
  }
  /** perf_sample__fprintf_insn's script_fetch_insn, when insn or insnlen is printed. */
  private insn(f: ReadonlySet<ScriptField>, pid: number, ip: bigint, kernel: boolean): Uint8Array | undefined {
    if (!f.has('insn') && !f.has('insnlen')) return undefined;
    const syms = this.symbols();
    // perf reads kernel code from a kcore_dir's kcore: not modelled, so refused rather than printed differently
    if (kernel && syms.dsos.kernelFromKcore)
      throw new FormatOptionError('-F insn/insnlen: kernel code from a kcore_dir is not supported yet');
    return syms.insnAt(pid, ip, kernel);
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
    if (fs.unprintable) throw fs.unprintable;
    const rec = decoded ?? (raw.decode() as Extract<PerfRecord, { kind: 'sample' }>);
    const a = entry;
    const sf: SampleFields = { pid: rec.pid ?? -1, tid: rec.tid ?? -1, cpu: rec.cpu ?? -1, time: rec.time ?? NO_U64 };
    const comm = this.threads.comm(sf.pid, sf.tid);
    const f = fs.has;
    const period = periodOverride ?? rec.period ?? a?.attr.samplePeriod ?? 0n;
    if (this.filter.sampleSkipped(sf.cpu, sf.pid, sf.tid, comm, rec.time ?? NO_U64)) return;
    if (guestMode(raw.misc & PERF_RECORD_MISC_CPUMODE_MASK)) return;
    const hide = this.opts.hideCallGraph === true;
    let entries: ChainEntry[] | undefined =
      f.has('ip') && rec.callchain && !hide ? callchainEntries(rec.callchain, this.opts.maxStack) : undefined;
    const unwinder = entries && a ? this.dwarf() : undefined;
    if (entries && a && unwinder)
      entries = entries.concat(unwinder.frames(rec, a.attr, sf.pid, this.opts.maxStack ?? 127));
    const chain = entries?.map((e) => (e.user ? this.maps.printedAddress(sf.pid, e.ip) : e.ip));
    const cols = f.has('ip') ? symbolColumns(f) : undefined;
    const syms = cols ? this.symbols() : undefined;
    const cpumode = raw.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    const kernelIp = cpumode === PERF_RECORD_MISC_KERNEL || cpumode === PERF_RECORD_MISC_GUEST_KERNEL;
    const addrCols = addrColumns(f, a?.attr);
    const addr = rec.addr ?? 0n;
    const l: SampleLine = {
      fields: f,
      comm,
      period,
      event: attrIndex >= 0 ? this.s.eventNameAt(attrIndex) : '[unknown]',
      eventWidth: this.width(),
      chain,
      callchainComm: fs.callchain && !hide,
      ns: this.opts.ns,
      ipSymbol: cols && syms && !entries ? syms.text(cols, sf.pid, rec.ip ?? 0n, kernelIp) : undefined,
      // an inlined frame says so even without sym/dso columns
      chainSymbols: entries?.map((e) =>
        cols && syms ? syms.text(cols, sf.pid, e.ip, !e.user, e.inlined) : e.inlined === undefined ? '' : ' (inlined)',
      ),
      trace: f.has('trace') ? this.trace(a?.attr, rec) : undefined,
      // thread__resolve: a kernel address in the kernel's maps, else in the process's
      addrSymbol: addrCols ? this.symbols().text(addrCols, sf.pid, addr, addr >= 1n << 63n) : undefined,
      start: this.startColumns(f, raw, sf.time),
    };
    if (f.has('time') && !this.opts.json) sf.time = this.times.shown(sf.time);
    if (this.extraFields(f)) {
      const x = {
        attr: a?.attr,
        insn: this.insn(f, sf.pid, rec.ip ?? 0n, kernelIp),
        brstack: this.brstack(f, sf.pid, rec, kernelIp),
      };
      l.beforeIp = this.extras.beforeIp(f, rec, x);
      l.afterIp = this.extras.afterIp(f, rec, x);
      if (this.opts.json) l.json = extrasJson(f, rec, x);
    }
    this.out(this.opts.json ? sampleJson(rec, sf, l, raw.fileOffset) : sampleText(rec, sf, l));
  }
}
