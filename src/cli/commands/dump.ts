import { isFormatError } from '../../io/errors.js';
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { UsageError } from '../errors.js';
import { PerfFile, type RawRecord } from '../../perfdata/index.js';
import type { PerfRecord, SampleRecord } from '../../perfdata/records/index.js';
import type { AttrLayout } from '../../perfdata/layout.js';
import {
  RecordType,
  PERF_RECORD_USER_TYPE_START,
  PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER,
} from '../../abi/record-type.js';
import { SampleType, ReadFormat } from '../../abi/sample-format.js';
import { attrFlag } from '../../abi/event-attr.js';
import { formatPerfEvent, perfEventName, hexAlt } from '../../session/event-text.js';
import { defaultEventName } from '../../session/event-names.js';
import { OrderedEvents } from '../../session/ordered-events.js';
import { toJsonValue } from '../../perfdata/jsonl-values.js';
import { perfDumpLines } from '../../intelpt/packets/format-perf.js';

/**
 * `perfpoke dump -i F`: every record as `perf script -D` prints it
 * (tools/perf/util/session.c dump_event/dump_sample, event.c perf_event__fprintf_*):
 *
 *   <cpu> <time> 0x<offset> [0x<size>]: PERF_RECORD_<NAME><detail>
 *
 * in perf's delivery order (user records at once, kernel records sorted by time
 * and flushed per FINISHED_ROUND), or file order with --order=file. Symbol
 * lines (" ... thread:", " ...... dso:") and perf script's own sample lines are
 * not printed: they need symbol resolution. Pipe-mode offsets count from the
 * end of the 16-byte pipe header, as perf's do.
 */

interface DumpOptions {
  input: string;
  hex?: boolean;
  json?: boolean;
  textPokeAbi: string;
  order: string;
}

const U32_MAX = 4294967295;
const U64_MAX = (1n << 64n) - 1n;
const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

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
  /** __evlist__combined_sample_type: OR of every attr's sample_type. */
  combinedSampleType(): bigint {
    let t = 0n;
    for (const a of this.f.attrs) t |= a.attr.sampleType;
    return t;
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
  noteKernelMap(start: bigint, len: bigint): void {
    this.kernelMaps.push([start, start + len]);
  }
  /**
   * "name+0xoff" of the KSYMBOL covering addr, if any. An address inside a
   * kernel MMAP resolves to the kernel map first in perf (whose symbols -D
   * does not load), so perf prints no name there even when a KSYMBOL covers it.
   */
  ksymbolAt(addr: bigint): string | undefined {
    if (this.kernelMaps.some(([s, e]) => addr >= s && addr < e)) return undefined;
    for (const [start, k] of this.ksyms) {
      if (addr >= start && addr < start + BigInt(k.len)) return `${k.name}+0x${(addr - start).toString(16)}`;
    }
    return undefined;
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

/** trace_event(): perf's hex dump of a record (the lines starting with "."). */
export function hexDump(bytes: Uint8Array): string {
  let s = `.\n. ... raw event: size ${bytes.length} bytes\n`;
  for (let i = 0; i < bytes.length; i += 16) {
    const line = bytes.subarray(i, i + 16);
    s += `.  ${i.toString(16).padStart(4, '0')}: `;
    for (const b of line) s += ' ' + b.toString(16).padStart(2, '0');
    s += '   '.repeat(16 - line.length) + '  ';
    for (const b of line) s += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    s += ' '.repeat(16 - line.length) + '\n';
  }
  return s + '\n';
}

/** cpu_map__snprint: "0-3,5,7-8". */
function cpuList(cpus: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1 && cpus[i]! >= 0) j++;
    out.push(j > i ? `${cpus[i]}-${cpus[j]}` : `${cpus[i]}`);
    i = j + 1;
  }
  return out.join(',');
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** perf_reg_name for x86 (arch/x86/include/uapi/asm/perf_regs.h order). */
const X86_REGS = [
  'AX',
  'BX',
  'CX',
  'DX',
  'SI',
  'DI',
  'BP',
  'SP',
  'IP',
  'FLAGS',
  'CS',
  'SS',
  'DS',
  'ES',
  'FS',
  'GS',
  'R8',
  'R9',
  'R10',
  'R11',
  'R12',
  'R13',
  'R14',
  'R15',
];
function regName(i: number): string {
  if (i < X86_REGS.length) return X86_REGS[i]!;
  if (i >= 32 && i < 64) return `XMM${(i - 32) >> 1}`; // perf names both halves XMMn
  return 'unknown';
}
const REGS_ABI = ['none', '32-bit', '64-bit'];

function regsLines(kind: string, mask: bigint, r: { abi: bigint; regs: bigint[] }): string {
  if (r.abi === 0n) return '';
  let s = `... ${kind} regs: mask 0x${mask.toString(16)} ABI ${REGS_ABI[Number(r.abi)] ?? 'unknown'}\n`;
  let k = 0;
  for (let bit = 0; bit < 64; bit++) {
    if (!((mask >> BigInt(bit)) & 1n)) continue;
    s += `.... ${regName(bit).padEnd(5)} 0x${hex16(r.regs[k++] ?? 0n)}\n`;
  }
  return s;
}

/** unit_number__scnprintf for page sizes: "4K", "2M", or "N/A". */
function pageSizeName(v: bigint): string {
  if (!v) return 'N/A';
  const units = ['', 'K', 'M', 'G', 'T'];
  let u = 0;
  while (v >= 1024n && v % 1024n === 0n && u < units.length - 1) {
    v /= 1024n;
    u++;
  }
  return `${v}${units[u]}`;
}

/** dump_sample(): "(IP, 0x<misc>): pid/tid: 0xip period: N addr: 0x..." and the detail lines. */
function sampleText(s: SampleRecord, L: AttrLayout | undefined): string {
  const period = s.period ?? L?.attr.samplePeriod ?? 0n;
  let out = `(IP, 0x${s.misc.toString(16)}): ${s.pid ?? -1}/${s.tid ?? -1}: ${hexAlt(s.ip ?? 0n)} period: ${period} addr: ${hexAlt(s.addr ?? 0n)}\n`;
  if (!L) return out;
  const t = L.sampleType;
  if (has(t, SampleType.CALLCHAIN) && s.callchain) {
    out += `... FP chain: nr:${s.callchain.length}\n`;
    s.callchain.forEach((ip, i) => (out += `..... ${String(i).padStart(2)}: ${hex16(ip)}\n`));
  }
  if (has(t, SampleType.BRANCH_STACK) && s.branchStack) {
    out += `... branch stack: nr:${s.branchStack.entries.length}\n`;
    s.branchStack.entries.forEach((e, i) => {
      const f = e.flags;
      const bit = (n: number): boolean => ((f >> BigInt(n)) & 1n) === 1n;
      const cycles = Number((f >> 4n) & 0xffffn);
      out += `..... ${String(i).padStart(2)}: ${hex16(e.from)} -> ${hex16(e.to)} ${cycles} cycles ${bit(0) ? 'M' : ' '}${bit(1) ? 'P' : ' '}${bit(3) ? 'A' : ' '}${bit(2) ? 'T' : ' '} ${Number(f >> 24n).toString(16)}\n`;
    });
  }
  if (has(t, SampleType.REGS_USER) && s.regsUser) out += regsLines('user', L.attr.sampleRegsUser, s.regsUser);
  if (has(t, SampleType.REGS_INTR) && s.regsIntr) out += regsLines('intr', L.attr.sampleRegsIntr, s.regsIntr);
  if (has(t, SampleType.STACK_USER) && s.stackUser) {
    // evsel__parse_sample: size is dyn_size (what the kernel really copied); offset points at the size field
    const su = s.stackUser;
    out += su.data.length
      ? `... ustack: size ${su.dynSize ?? 0n}, offset 0x${stackOffset(s, L).toString(16)}\n`
      : '... ustack: size 0, offset 0x0\n';
  }
  if ((has(t, SampleType.WEIGHT) || has(t, SampleType.WEIGHT_STRUCT)) && s.weight !== undefined) {
    if (has(t, SampleType.WEIGHT_STRUCT)) {
      const w = s.weight;
      out += `... weight: ${w & 0xffffffffn},0x${((w >> 32n) & 0xffffn).toString(16)},0x${((w >> 48n) & 0xffffn).toString(16)}\n`;
    } else out += `... weight: ${s.weight}\n`;
  }
  if (has(t, SampleType.DATA_SRC)) out += ` . data_src: 0x${(s.dataSrc ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.PHYS_ADDR)) out += ` .. phys_addr: 0x${(s.physAddr ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.DATA_PAGE_SIZE)) out += ` .. data page size: ${pageSizeName(s.dataPageSize ?? 0n)}\n`;
  if (has(t, SampleType.CODE_PAGE_SIZE)) out += ` .. code page size: ${pageSizeName(s.codePageSize ?? 0n)}\n`;
  if (has(t, SampleType.TRANSACTION)) out += `... transaction: ${(s.transaction ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.READ) && s.read) {
    const rf = L.readFormat;
    out += '... sample_read:\n';
    if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) out += `...... time enabled ${hex16(s.read.timeEnabled ?? 0n)}\n`;
    if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) out += `...... time running ${hex16(s.read.timeRunning ?? 0n)}\n`;
    const lost = (v: { lost?: bigint }): string => (has(rf, ReadFormat.LOST) ? `, lost ${v.lost ?? 0n}` : '');
    if (has(rf, ReadFormat.GROUP)) {
      out += `.... group nr ${s.read.values.length}\n`;
      for (const v of s.read.values) out += `..... id ${hex16(v.id ?? 0n)}, value ${hex16(v.value)}${lost(v)}\n`;
    } else {
      const v = s.read.values[0] ?? { value: 0n };
      out += `..... id ${hex16(v.id ?? 0n)}, value ${hex16(v.value)}${lost(v)}\n`;
    }
  }
  return out;
}

/** perf's stack_dump.offset: where the user stack data starts inside the record (bytes from the record start). */
function stackOffset(s: SampleRecord, L: AttrLayout): number {
  // recompute by walking the fields before STACK_USER, as evsel__parse_sample does
  const t = L.sampleType;
  let off = 8;
  for (const b of [
    SampleType.IDENTIFIER,
    SampleType.IP,
    SampleType.TID,
    SampleType.TIME,
    SampleType.ADDR,
    SampleType.ID,
    SampleType.STREAM_ID,
    SampleType.CPU,
    SampleType.PERIOD,
  ])
    if (has(t, b)) off += 8;
  if (has(t, SampleType.READ) && s.read) {
    const rf = L.readFormat;
    const per = 8 + (has(rf, ReadFormat.ID) ? 8 : 0) + (has(rf, ReadFormat.LOST) ? 8 : 0);
    const times = (has(rf, ReadFormat.TOTAL_TIME_ENABLED) ? 8 : 0) + (has(rf, ReadFormat.TOTAL_TIME_RUNNING) ? 8 : 0);
    off += has(rf, ReadFormat.GROUP) ? 8 + times + per * s.read.values.length : per + times;
  }
  if (has(t, SampleType.CALLCHAIN)) off += 8 + 8 * (s.callchain?.length ?? 0);
  if (has(t, SampleType.RAW)) off += 4 + (s.raw?.length ?? 0);
  if (has(t, SampleType.BRANCH_STACK)) off += 8 + (L.branchHwIndex ? 8 : 0) + 24 * (s.branchStack?.entries.length ?? 0);
  if (has(t, SampleType.REGS_USER)) off += 8 + (s.regsUser && s.regsUser.abi ? 8 * s.regsUser.regs.length : 0);
  return off; // perf: offset of the u64 size field (evsel__parse_sample keeps array - 1)
}

/** The text perf prints after "PERF_RECORD_<NAME>" for one record in -D mode ('' = perf prints no newline either). */
export function detailText(rec: PerfRecord, raw: RawRecord, ctx: DumpContext): string {
  const head = 'PERF_RECORD_' + perfEventName(rec.type);
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
      if (!L) return s + ': unhandled!\n';
      const rf = L.readFormat;
      if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) s += `... time enabled : ${rec.read.timeEnabled ?? 0n}\n`;
      if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) s += `... time running : ${rec.read.timeRunning ?? 0n}\n`;
      if (has(rf, ReadFormat.ID)) s += `... id           : ${v.id ?? 0n}\n`;
      if (has(rf, ReadFormat.LOST)) s += `... lost         : ${v.lost ?? 0n}\n`;
      // perf script has no read callback: the stub adds its own line
      return s + ': unhandled!\n';
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
      return ` nr: ${rec.entries.length} thread${rec.entries.length > 1 ? 's' : ''}: ${rec.entries.map((e) => BigInt.asIntN(32, e.pid)).join(', ')}\n`;
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
      let s = ` size: ${hexAlt(rec.dataSize)}  offset: ${hexAlt(rec.offset)}  ref: ${hexAlt(rec.reference)}  idx: ${rec.idx}  tid: ${rec.tid}  cpu: ${rec.cpu}\n`;
      // intel_pt_process_auxtrace_event → intel_pt_dump: perf's packet listing of the buffer
      if (ctx.auxType === PERF_AUXTRACE_INTEL_PT && rec.data)
        s += '.\n' + [...perfDumpLines(rec.data)].join('\n') + '\n';
      return s;
    }
    case 'time_conv':
      return '\n: unhandled!\n'; // checked with perf 6.1
    case 'stat_config':
      return '\n'; // checked with perf 6.1
    case 'auxtrace_info':
      ctx.auxType = rec.auxType;
      return ` type: ${rec.auxType}\n` + (rec.auxType === PERF_AUXTRACE_INTEL_PT ? intelPtInfo(rec.priv) : '');
    case 'mmap':
    case 'mmap2': {
      if (rec.filename.startsWith('[kernel.kallsyms]')) ctx.noteKernelMap(rec.addr, rec.len);
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
          b.length
            ? `            ${label} bytes: ${[...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')}\n`
            : '';
        return (
          ` ${rec.addr.toString(16)}  len ${rec.len} (RFC ABI)\n` +
          line('Old', rec.oldBytes) +
          line('New', rec.newBytes)
        );
      }
      // perf_event__fprintf_text_poke: " <addr> <sym+off> old len…"; we know the symbols KSYMBOL records define
      // (trampolines, BPF), not the running kernel's kallsyms
      const full = formatPerfEvent(rec as unknown as Parameters<typeof formatPerfEvent>[0]).slice(head.length);
      const sym = ctx.ksymbolAt(rec.addr);
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
    priv.slice(17).forEach((w, i) => bytes.writeBigUInt64LE(w, i * 8));
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

/** Everything dump prints for one record (without the symbol lines perf script adds). */
export function recordText(raw: RawRecord, ctx: DumpContext): string {
  const rec = raw.decode();
  const off = ctx.offset(raw);
  let s = '';
  if (ctx.hex)
    s += `\n${hexAlt(off)}@${ctx.path} [0x${raw.size.toString(16)}]: event: ${raw.type}\n` + hexDump(raw.bytes);
  // the seed's RFC poke (type 19 with --text-poke-abi=rfc) is named for what it is, not perf's CGROUP
  const name = rec.kind === 'text_poke' ? 'TEXT_POKE' : perfEventName(raw.type);
  s += `${tstamp(ctx, raw.type, rec)}${hexAlt(off)} [0x${raw.size.toString(16)}]: PERF_RECORD_${name}`;
  const d = detailText(rec, raw, ctx);
  return s + (ctx.hex ? d : d.endsWith('\n') ? d : d + '\n');
}

/** JSON form: the decoded record with bigints as "0x…" strings and bytes as hex (docs/reader.md). */
export function recordJson(raw: RawRecord, ctx: DumpContext): string {
  const rec = raw.decode();
  const o = toJsonValue(rec) as Record<string, unknown>;
  o.name = perfEventName(raw.type);
  o.offset = ctx.offset(raw);
  const t = raw.timestamp();
  if (t !== undefined) o.time = toJsonValue(t);
  return JSON.stringify(o);
}

/**
 * Print every record of `f` through `emit`, in perf's order ('perf') or file order.
 * perf order: user records (≥ 64) and records without a time at once; timed kernel
 * records queued and released at each FINISHED_ROUND and at the end.
 */
export async function dumpRecords(
  f: PerfFile,
  emit: (raw: RawRecord) => void | Promise<void>,
  order: 'perf' | 'file',
): Promise<void> {
  try {
    await dumpRecordsIn(f, emit, order);
  } catch (e) {
    // record-body errors come from decode(), which knows offsets but not the file
    throw isFormatError(e) && f.path !== '-' ? e.withFile(f.path) : e;
  }
}

async function dumpRecordsIn(
  f: PerfFile,
  emit: (raw: RawRecord) => void | Promise<void>,
  order: 'perf' | 'file',
): Promise<void> {
  if (order === 'file') {
    for await (const raw of f.records()) await emit(raw);
    return;
  }
  // perf's queue is unbounded; ours HALF-flushes past 16 MiB so dump stays in ~200 MB
  // (order differs from perf only for files whose rounds hold more than that)
  const oe = new OrderedEvents<RawRecord>({ maxQueueBytes: 16 << 20 });
  const drain = async (): Promise<void> => {
    const ready = oe.ready;
    oe.ready = [];
    for (const r of ready) await emit(r);
  };
  for await (const raw of f.records()) {
    const t = raw.type < PERF_RECORD_USER_TYPE_START ? raw.timestamp() : undefined;
    // ordered_events__queue refuses time 0 and ~0 (-ETIME): delivered at once
    if (t === undefined || t === 0n || t === U64_MAX) {
      await emit(raw);
      if (raw.type === RecordType.FINISHED_ROUND) {
        oe.finishedRound();
        await drain();
      }
      continue;
    }
    oe.queue(t, raw.fileOffset, raw.size, raw.copy());
    if (oe.ready.length) await drain();
  }
  oe.finish();
  await drain();
}

export function register(program: Command): void {
  program
    .command('dump')
    .description('print every record of a perf.data file, one summary line each, as `perf script -D` does')
    .requiredOption('-i, --input <file>', "perf.data file (file or pipe mode); '-' reads a pipe from stdin")
    .option('--hex', "also print perf's hex dump of every record (the full `perf script -D` layout)")
    .option('--json', 'print one JSON object per record (u64 as "0x…" strings, bytes as hex)')
    .option('--text-poke-abi <abi>', "read type 19 as 'final' (CGROUP) or 'rfc' (the seed's TEXT_POKE)", 'final')
    .option('--order <order>', "'perf' (perf's delivery order: sorted by time per round) or 'file'", 'perf')
    .action(async (opts: DumpOptions) => {
      if (opts.textPokeAbi !== 'final' && opts.textPokeAbi !== 'rfc')
        throw new UsageError(`--text-poke-abi: expected final or rfc, got ${opts.textPokeAbi}`);
      if (opts.order !== 'perf' && opts.order !== 'file')
        throw new UsageError(`--order: expected perf or file, got ${opts.order}`);
      const f = await PerfFile.open(opts.input, { textPokeAbi: opts.textPokeAbi });
      const ctx = new DumpContext(f, opts.input === '-' || f.pipe ? 'pipe' : opts.input, !!opts.hex);
      const out = new BufferedOut();
      // progress on stderr for big files, only on a terminal (by file offset of the data section)
      const data = f.header.data;
      const bar =
        process.stderr.isTTY && !f.pipe && data.size > 32 << 20
          ? new SingleBar({ stream: process.stderr, format: 'dump {bar} {percentage}%', clearOnComplete: true })
          : undefined;
      bar?.start(data.size, 0);
      let shown = 0;
      try {
        await dumpRecords(
          f,
          (raw) => {
            if (bar && raw.fileOffset - shown > 1 << 20) bar.update((shown = raw.fileOffset) - data.offset);
            return out.write(opts.json ? recordJson(raw, ctx) + '\n' : recordText(raw, ctx));
          },
          opts.order,
        );
      } finally {
        bar?.stop();
        await out.flush();
        await f.close();
      }
    });
}

/** Batches stdout writes (one write per ~64 KiB) and respects back-pressure. */
class BufferedOut {
  private parts: string[] = [];
  private n = 0;
  private pending: Promise<void> = Promise.resolve();
  /** Returns a promise (wait for it) when a chunk went out: back-pressure from stdout. */
  write(s: string): Promise<void> | undefined {
    this.parts.push(s);
    this.n += s.length;
    return this.n >= 1 << 16 ? this.flush() : undefined;
  }
  flush(): Promise<void> {
    if (this.parts.length) {
      const chunk = this.parts.join('');
      this.parts = [];
      this.n = 0;
      this.pending = this.pending.then(
        () =>
          new Promise<void>((resolve) => {
            if (process.stdout.write(chunk)) resolve();
            else process.stdout.once('drain', () => resolve());
          }),
      );
    }
    return this.pending;
  }
}

/** The whole dump of a file as one string (tests, small files). */
export async function dumpToString(
  path: string,
  opts: { hex?: boolean; order?: 'perf' | 'file'; textPokeAbi?: 'final' | 'rfc'; label?: string } = {},
): Promise<string> {
  const f = await PerfFile.open(path, { textPokeAbi: opts.textPokeAbi });
  const ctx = new DumpContext(f, f.pipe ? 'pipe' : (opts.label ?? path), !!opts.hex);
  const parts: string[] = [];
  try {
    await dumpRecords(f, (raw) => void parts.push(recordText(raw, ctx)), opts.order ?? 'perf');
  } finally {
    await f.close();
  }
  return parts.join('');
}
