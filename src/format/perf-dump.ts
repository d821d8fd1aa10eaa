/**
 * perf 6.1's `perf script -D` text for every record (tools/perf/util/session.c
 * dump_event/dump_sample, event.c perf_event__fprintf_*):
 *
 *   <cpu> <time> 0x<offset> [0x<size>]: PERF_RECORD_<NAME><detail>
 *
 * and its JSON Lines form. Symbol lines (" ... thread:", " ...... dso:") and
 * perf script's own sample lines are not printed: they need symbol
 * resolution. Pipe-mode offsets count from the end of the 16-byte pipe
 * header, as perf's do. The records come in perf's delivery order from the
 * session (src/session/session.ts); `DumpContext` keeps what perf's evlist
 * and machine know by then.
 */
import type { PerfFile, RawRecord } from '../perfdata/index.js';
import type { PerfRecord } from '../perfdata/records/index.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { RecordType, PERF_RECORD_USER_TYPE_START, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';
import { SampleType, ReadFormat } from '../abi/sample-format.js';
import { attrFlag } from '../abi/event-attr.js';
import { formatPerfEvent, perfEventName, hexAlt } from './perf-event-text.js';
import { defaultEventName } from '../session/event-names.js';
import { openSession } from '../session/session.js';
import { toJsonValue } from '../perfdata/jsonl-values.js';
import { perfDumpLines } from './pt-packets-perf.js';
import { cpuList, hexDump, sampleText } from './perf-dump-sample.js';
import { jsonLine, jsonTime } from './json-lines.js';
import type { KcoreDir } from '../machine/kcore-dir.js';
import {
  kernelSymbolModel,
  loadedKernelSymbol,
  type KernelMapRecord,
  type KernelSymbolModel,
} from '../machine/kernel-symbols.js';
import { hexBytes } from '../io/hex.js';
import { fastSampleBytes } from './perf-dump-fast.js';
import { ByteText } from '../io/byte-text.js';
import { StringSink, type TextSink } from './text-sink.js';

const U32_MAX = 4294967295;
const U64_MAX = (1n << 64n) - 1n;
const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;
const CPU = 1;
const TIME = 2;

/** What dump needs to know of the event list (perf's evlist) to print like perf. */
export class DumpContext {
  readonly f: PerfFile;
  readonly path: string;
  readonly hex: boolean;
  constructor(f: PerfFile, path: string, hex: boolean) {
    this.f = f;
    this.path = path;
    this.hex = hex;
  }
  private combined = 0n;
  private combinedOf = -1;
  /** Whether the combined sample_type has CPU (bit 0) / TIME (bit 1), for evlist__print_tstamp on samples. */
  private prefixBits = 0;
  private prefixOf = -1;
  tstampHas(bit: typeof CPU | typeof TIME): boolean {
    if (this.prefixOf !== this.f.attrs.length) {
      const t = this.combinedSampleType();
      this.prefixBits = (has(t, SampleType.CPU) ? CPU : 0) | (has(t, SampleType.TIME) ? TIME : 0);
      this.prefixOf = this.f.attrs.length;
    }
    return (this.prefixBits & bit) !== 0;
  }
  /** __evlist__combined_sample_type: OR of every attr's sample_type (recomputed when pipe mode adds attrs). */
  combinedSampleType(): bigint {
    const attrs = this.f.attrs;
    if (this.combinedOf !== attrs.length) {
      let t = 0n;
      for (const a of attrs) t |= a.attr.sampleType;
      this.combined = t;
      this.combinedOf = attrs.length;
    }
    return this.combined;
  }
  /** AUXTRACE_INFO type seen so far (1: intel_pt, whose buffers perf lists packet by packet). */
  auxType: number | undefined;
  private ksyms = new Map<bigint, { len: number; name: string }>();
  /** KSYMBOL register/unregister, in delivery order (machine__process_ksymbol). */
  noteKsymbol(addr: bigint, len: number, name: string, unregister: boolean): void {
    if (unregister) this.ksyms.delete(addr);
    else this.ksyms.set(addr, { len, name });
  }
  /** Kernel MMAPs ([kernel.kallsyms]…) seen so far: [start, end). */
  private kernelMaps: [bigint, bigint][] = [];
  /** Every kernel-space MMAP (kernel text and modules), for perf's kcore/kallsyms choice. */
  private kernelMmaps: KernelMapRecord[] = [];
  noteKernelMmap(start: bigint, len: bigint, filename: string): void {
    if (filename.startsWith('[kernel.kallsyms]')) this.kernelMaps.push([start, start + len]);
    this.kernelMmaps.push({ start, end: start + len, filename });
  }
  /**
   * "name+0xoff" of the KSYMBOL covering addr, if any. An address inside a
   * kernel MMAP resolves to the kernel map first in perf (whose symbols -D
   * does not load), so perf prints no name there even when a KSYMBOL covers it.
   */
  ksymbolAt(addr: bigint): string | undefined {
    if (this.kernelMaps.some(([s, e]) => addr >= s && addr < e)) return undefined;
    return this.liveKsymbol(addr);
  }
  private liveKsymbol(addr: bigint): string | undefined {
    for (const [start, k] of this.ksyms) {
      if (addr >= start && addr < start + BigInt(k.len)) return `${k.name}+0x${(addr - start).toString(16)}`;
    }
    return undefined;
  }
  /** The recording's kcore_dir (`-i DIR`): perf loads its kallsyms with the kernel map. */
  kcore: KcoreDir | undefined;
  /** Set when perf loads the kernel map (the first poke in it), from the maps known then. */
  private model: KernelSymbolModel | undefined;
  /**
   * The name perf prints beside a TEXT_POKE (machine__process_text_poke ->
   * perf_event__fprintf_text_poke). With a kcore_dir, perf loads it when the
   * first poke falls in the kernel map; from then on kernel text is named
   * from its kallsyms (the rule src/machine/symbolizer.ts follows for `pokes`).
   */
  textPokeSymbol(addr: bigint): string | undefined {
    const k = this.kcore;
    if (!k) return this.ksymbolAt(addr);
    if (!this.model && this.kernelMaps.some(([s, e]) => addr >= s && addr < e)) {
      this.model = kernelSymbolModel(k, this.kernelMmaps);
      // perf -D prints this poke while map__load swaps the kernel map for the kcore's: the map it holds
      // finds no symbol for this one poke (with kallsyms alone the map stays and the name is found)
      if (this.model.usesKcore) return undefined;
    }
    if (!this.model) return this.liveKsymbol(addr);
    const s = loadedKernelSymbol(this.model, addr);
    if (s === 'no-map') return this.liveKsymbol(addr);
    return s ? `${s.name}+0x${(addr - s.start).toString(16)}` : undefined;
  }
  /** perf reports pipe offsets from the end of the pipe header. */
  offset(raw: { fileOffset: number }): number {
    return this.f.pipe ? raw.fileOffset - 16 : raw.fileOffset;
  }
}

/** evlist__print_tstamp: "<cpu> <time> " as far as the combined sample_type has them. */
function tstamp(ctx: DumpContext, type: number, rec: PerfRecord | undefined): string {
  const attrs = ctx.f.attrs;
  if (type !== RecordType.SAMPLE && (attrs.length === 0 || !attrFlag(attrs[0]!.attr, 'sample_id_all'))) return '-1 -1 ';
  const t = ctx.combinedSampleType();
  let cpu: number = U32_MAX;
  let time: bigint = U64_MAX;
  if (type >= PERF_RECORD_USER_TYPE_START) {
    // perf_session__process_user_event: struct perf_sample sample = { .time = 0 }
    cpu = 0;
    time = 0n;
  } else if (rec && rec.kind === 'sample') {
    cpu = rec.cpu ?? U32_MAX;
    time = rec.time ?? U64_MAX;
  } else if (rec && 'sampleId' in rec && rec.sampleId) {
    cpu = rec.sampleId.cpu ?? U32_MAX;
    time = rec.sampleId.time ?? U64_MAX;
  }
  let s = '';
  if (has(t, SampleType.CPU)) s += `${cpu >>> 0} `;
  if (has(t, SampleType.TIME)) s += `${time} `;
  return s;
}

/** The text perf prints after "PERF_RECORD_<NAME>" for one record in -D mode ('' = perf prints no newline either). */
export function detailText(rec: PerfRecord, raw: RawRecord, ctx: DumpContext): string {
  const head = `PERF_RECORD_${perfEventName(rec.type)}`;
  switch (rec.kind) {
    case 'sample':
      return sampleText(rec, raw.layout);
    case 'lost':
      return `: id:${rec.id}: lost:${rec.lost}\n`;
    case 'lost_samples':
      return `: id:${rec.sampleId?.id ?? U64_MAX}: lost samples :${rec.lost}\n`;
    case 'read': {
      const L = raw.layout;
      const v = rec.read.values[0] ?? { value: 0n };
      let s = `: ${rec.pid} ${rec.tid} ${L ? eventName(ctx, L) : '(null)'} ${v.value}\n`;
      if (!L) return `${s}: unhandled!\n`;
      const rf = L.readFormat;
      if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) s += `... time enabled : ${rec.read.timeEnabled ?? 0n}\n`;
      if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) s += `... time running : ${rec.read.timeRunning ?? 0n}\n`;
      if (has(rf, ReadFormat.ID)) s += `... id           : ${v.id ?? 0n}\n`;
      if (has(rf, ReadFormat.LOST)) s += `... lost         : ${v.lost ?? 0n}\n`;
      // perf script has no read callback: the stub adds its own line
      return `${s}: unhandled!\n`;
    }
    case 'throttle':
    case 'unthrottle':
      return '\n';
    case 'finished_init':
    case 'unknown':
      return ': unhandled!\n';
    case 'header_attr':
    case 'header_feature':
    case 'tracing_data':
      return '';
    case 'finished_round':
      return '\n';
    case 'id_index': {
      let s = ` nr: ${rec.entries.length}\n`;
      for (const e of rec.entries)
        s += ` ... id: ${e.id}  idx: ${e.idx}  cpu: ${BigInt.asIntN(64, e.cpu)}  tid: ${BigInt.asIntN(64, e.tid)}\n`;
      return s;
    }
    case 'thread_map':
      return (
        ` nr: ${rec.entries.length} thread${rec.entries.length > 1 ? 's' : ''}: ` +
        `${rec.entries.map((e) => BigInt.asIntN(32, e.pid)).join(', ')}\n`
      );
    case 'cpu_map':
      return `: ${cpuList(rec.data.cpus)}\n`;
    case 'event_update': {
      let s = `\n... id:    ${rec.id}\n`;
      if (rec.unit !== undefined) s += `... unit:  ${rec.unit}\n`;
      else if (rec.scale !== undefined) s += `... scale: ${rec.scale.toFixed(6)}\n`;
      else if (rec.name !== undefined) s += `... name:  ${rec.name}\n`;
      else if (rec.cpus) s += `... ${cpuList(rec.cpus.cpus)}\n`;
      else s += '... unknown type\n';
      return s;
    }
    case 'auxtrace': {
      let s =
        ` size: ${hexAlt(rec.dataSize)}  offset: ${hexAlt(rec.offset)}  ref: ${hexAlt(rec.reference)}  ` +
        `idx: ${rec.idx}  tid: ${rec.tid}  cpu: ${rec.cpu}\n`;
      // intel_pt_process_auxtrace_event → intel_pt_dump: perf's packet listing of the buffer
      if (ctx.auxType === PERF_AUXTRACE_INTEL_PT && rec.data) s += `.\n${[...perfDumpLines(rec.data)].join('\n')}\n`;
      return s;
    }
    case 'time_conv':
      return '\n: unhandled!\n'; // checked with perf 6.1
    case 'stat_config':
      return '\n'; // checked with perf 6.1
    case 'auxtrace_info':
      ctx.auxType = rec.auxType;
      return ` type: ${rec.auxType}\n${rec.auxType === PERF_AUXTRACE_INTEL_PT ? intelPtInfo(rec.priv) : ''}`;
    case 'mmap':
    case 'mmap2': {
      if (rec.pid === -1) ctx.noteKernelMmap(rec.addr, rec.len, rec.filename);
      const full = formatPerfEvent(rec as unknown as Parameters<typeof formatPerfEvent>[0]);
      return full.startsWith(head) ? full.slice(head.length) : '\n';
    }
    case 'ksymbol': {
      ctx.noteKsymbol(rec.addr, rec.len, rec.name, (rec.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) !== 0);
      return formatPerfEvent(rec as unknown as Parameters<typeof formatPerfEvent>[0]).slice(head.length);
    }
    case 'text_poke': {
      if (rec.abi === 'rfc') {
        const line = (label: string, b: Uint8Array): string =>
          b.length ? `            ${label} bytes: ${hexBytes(b)}\n` : '';
        return (
          ` ${rec.addr.toString(16)}  len ${rec.len} (RFC ABI)\n` +
          line('Old', rec.oldBytes) +
          line('New', rec.newBytes)
        );
      }
      // perf_event__fprintf_text_poke: " <addr> <sym+off> old len…": KSYMBOL names (trampolines, BPF), and
      // kernel symbols when the recording's kcore_dir has them
      const full = formatPerfEvent(rec as unknown as Parameters<typeof formatPerfEvent>[0]).slice(head.length);
      const sym = ctx.textPokeSymbol(rec.addr);
      if (!sym) return full;
      const a = rec.addr.toString(16);
      return full.replace(`${a}  old len`, `${a} ${sym} old len`);
    }
    default: {
      const full = formatPerfEvent(rec as unknown as Parameters<typeof formatPerfEvent>[0]);
      return full.startsWith(head) ? full.slice(head.length) : '\n';
    }
  }
}

const PERF_AUXTRACE_INTEL_PT = 1;

/** intel_pt_print_info (tools/perf/util/intel-pt.c): the AUXTRACE_INFO priv words, as far as the record has them. */
function intelPtInfo(priv: bigint[]): string {
  const fmts: [string, 'd' | 'x'][] = [
    ['PMU Type', 'd'],
    ['Time Shift', 'd'],
    ['Time Muliplier', 'd'],
    ['Time Zero', 'd'],
    ['Cap Time Zero', 'd'],
    ['TSC bit', 'x'],
    ['NoRETComp bit', 'x'],
    ['Have sched_switch', 'd'],
    ['Snapshot mode', 'd'],
    ['Per-cpu maps', 'd'],
    ['MTC bit', 'x'],
    ['MTC freq bits', 'x'],
    ['TSC:CTC numerator', 'd'],
    ['TSC:CTC denominator', 'd'],
    ['CYC bit', 'x'],
    ['Max non-turbo ratio', 'd'],
    ['Filter string len.', 'd'],
  ];
  // perf prints the groups a record has: up to Per-cpu maps, up to CYC bit, up to Filter string len.
  let n = 0;
  for (const g of [10, 15, 17]) if (priv.length >= g) n = g;
  let s = '';
  for (let i = 0; i < n; i++) {
    const [label, f] = fmts[i]!;
    const v = priv[i]!;
    s += `  ${label.padEnd(20)}${f === 'x' ? hexAlt(v) : BigInt.asIntN(64, v).toString()}\n`;
  }
  if (n >= 17) {
    const len = Number(priv[16]!);
    const bytes = Buffer.alloc((priv.length - 17) * 8);
    priv.slice(17).forEach((w, i) => {
      bytes.writeBigUInt64LE(w, i * 8);
    });
    const str = bytes.subarray(0, Math.min(len, bytes.length)).toString('latin1').replace(/\0.*$/, '');
    s += `  ${'Filter string'.padEnd(20)}${str}\n`;
  }
  return s;
}

/** evsel__name: the EVENT_DESC name when the features helper filled it, else perf's generic name. */
function eventName(ctx: DumpContext, L: AttrLayout): string {
  const e = ctx.f.attrs.find((a) => a.attr === L.attr);
  return e?.name ?? defaultEventName(L.attr);
}

/** Everything dump prints for one record (without the symbol lines perf script adds), appended to `out`. */
export function recordBytes(out: ByteText, raw: RawRecord, ctx: DumpContext): void {
  const off = ctx.offset(raw);
  if (ctx.hex)
    out.str(`\n${hexAlt(off)}@${ctx.path} [0x${raw.size.toString(16)}]: event: ${raw.type}\n${hexDump(raw.bytes)}`);
  if (raw.type === RecordType.SAMPLE && fastSampleBytes(out, raw, ctx.tstampHas(CPU), ctx.tstampHas(TIME), off)) return;
  const rec = raw.decode();
  // the seed's RFC poke (type 19 with --text-poke-abi=rfc) is named for what it is, not perf's CGROUP
  const name = rec.kind === 'text_poke' ? 'TEXT_POKE' : perfEventName(raw.type);
  const head = `${tstamp(ctx, raw.type, rec)}${hexAlt(off)} [0x${raw.size.toString(16)}]: PERF_RECORD_${name}`;
  const d = detailText(rec, raw, ctx);
  out.str(head + (ctx.hex ? d : d.endsWith('\n') ? d : `${d}\n`));
}

/** recordBytes as a string. */
export function recordText(raw: RawRecord, ctx: DumpContext): string {
  const t = new ByteText(1 << 10);
  recordBytes(t, raw, ctx);
  return t.toString();
}

/**
 * JSON Lines form (docs/json/record.schema.json): `type` "record", the
 * record's `kind`, perf's `name`, the `offset` perf prints and the record's
 * time (`time`, `time_ns`); then the decoded fields as convert's JSON lines
 * hold them (docs/reader.md: u64 as "0x…", bytes as hex), with the numeric
 * record type as `record_type` and a body's own `time` and `offset` fields
 * (FORK, EXIT, THROTTLE; AUXTRACE) as `record_time` and `aux_offset`.
 */
export function recordJson(raw: RawRecord, ctx: DumpContext): string {
  const { kind, type, time, offset, ...fields } = toJsonValue(raw.decode()) as {
    kind: string;
    type: number;
    time?: string;
    offset?: string;
  } & Record<string, unknown>;
  const t = raw.type < PERF_RECORD_USER_TYPE_START ? raw.timestamp() : undefined;
  return jsonLine({
    type: 'record',
    kind,
    record_type: type,
    name: perfEventName(raw.type),
    offset: ctx.offset(raw),
    ...(t === undefined ? {} : jsonTime(t)),
    ...(time === undefined ? {} : { record_time: time }),
    ...(offset === undefined ? {} : { aux_offset: offset }),
    ...fields,
  });
}

export interface DumpOptions {
  /** Also perf's hex dump of every record (the full `perf script -D` layout). */
  hex?: boolean;
  json?: boolean;
  /** 'perf' (default): perf's delivery order; 'file': file order. */
  order?: 'perf' | 'file';
  textPokeAbi?: 'final' | 'rfc';
  /** The file name perf prints in --hex lines (default: the path). */
  label?: string;
  /** The recording's kcore_dir (`-i DIR` of `perf record --kcore`): TEXT_POKE symbols as perf prints them. */
  kcore?: KcoreDir;
}

/**
 * Every record of the perf.data file at `path` ('-': a pipe on stdin) as
 * `perf script -D` prints it, in perf's delivery order, into `out` (its
 * flush awaited past 64 KiB: back-pressure). `onRecord` sees each record
 * first (progress).
 */
export async function dumpFile(
  path: string,
  opts: DumpOptions,
  out: TextSink,
  onRecord?: (raw: RawRecord) => void,
): Promise<void> {
  // perf's queue is unbounded; ours HALF-flushes past 16 MiB so dump stays in ~200 MB
  // (order differs from perf only for files whose rounds hold more than that).
  // perf -D prints a FINISHED_ROUND when it reads it, before the records it releases.
  const s = await openSession(path, {
    textPokeAbi: opts.textPokeAbi,
    ordered: opts.order !== 'file',
    maxQueueBytes: 16 << 20,
    roundBeforeFlush: true,
    damage: 'defer',
    reuseRecords: true, // nothing here keeps a record past its batch
  });
  const ctx = new DumpContext(s.file, s.file.pipe ? 'pipe' : (opts.label ?? path), !!opts.hex);
  ctx.kcore = opts.kcore;
  try {
    for await (const batch of s.batches()) {
      for (let i = 0; i < batch.length; ) {
        try {
          i = dumpUntilFull(batch, i, ctx, !!opts.json, out, onRecord);
        } catch (e) {
          throw s.named(e);
        }
        if (out.pending >= 1 << 16) {
          const w = out.flush();
          if (w) await w;
        }
      }
    }
    // a damaged feature table: perf prints every record; we do too, then report it
    if (s.file.damage) throw s.file.damage;
  } finally {
    await s.close();
  }
}

/**
 * Dump batch[i…] into `out` until it holds 64 KiB; the index of the next
 * record. Out of dumpFile's loop, which V8 does not optimise (an async
 * function: no on-stack replacement into it while it runs).
 */
function dumpUntilFull(
  batch: RawRecord[],
  i: number,
  ctx: DumpContext,
  json: boolean,
  out: TextSink,
  onRecord?: (raw: RawRecord) => void,
): number {
  const text = out.bytes;
  while (i < batch.length) {
    const raw = batch[i++]!;
    onRecord?.(raw);
    const mark = text.length;
    try {
      if (json) text.str(recordJson(raw, ctx));
      else recordBytes(text, raw, ctx);
    } catch (e) {
      text.length = mark; // a record that fails prints nothing, as before
      throw e;
    }
    out.wrote();
    if (out.pending >= 1 << 16) break;
  }
  return i;
}

/** The whole dump of a file as one string (tests, small files). */
export async function dumpToString(path: string, opts: DumpOptions = {}): Promise<string> {
  const out = new StringSink();
  await dumpFile(path, opts, out);
  return out.text;
}
