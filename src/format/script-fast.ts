/**
 * `perf script` sample lines read straight from the record bytes, for the
 * plain samples that are most of a `perf record` file (no READ, RAW or other
 * variable-size field but the callchain, no register sets; text output; the symbol-free fields
 * and perf's default ones: comm tid pid cpu time period event addr ip sym
 * symoff dso; callchain lines: script-fast-chain.ts). The general path
 * (perf-script.ts printSample) decodes each sample into an object with a
 * BigInt per field and builds several strings; on a 2.3 M-sample file that fed
 * the garbage collector a third of script's time.
 *
 * Here u64s are read as two u32 halves, the pieces that repeat from line to
 * line (the padded comm, the event name, and " ip sym+0xoff (dso)" per
 * address) are kept as bytes in small caches, numbers are written as digits,
 * and the line goes straight into the output's byte buffer (ByteText): no
 * string per line, and a BigInt only on a symbol cache miss. Anything else
 * (a sample whose size is not exactly its fields', a time past 2^53 ns, --time
 * ranges, an unknown callchain context) returns false and takes the general
 * path, which raises the FormatErrors. The text is the general path's byte for byte: test/script-fast.test.ts and
 * test/script-options.test.ts compare it with perf on live recordings.
 */
import type { EventAttr } from '../abi/event-attr.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { type ByteText, PAD_ZERO } from '../io/byte-text.js';
import { viewOf } from '../io/byte-copy.js';
import { SampleType } from '../abi/sample-format.js';
import type { FieldSet, ScriptField } from './perf-script-fields.js';
import { addrColumns, type SymbolColumns, symbolColumns } from './script-symbols.js';
import { zeroPad } from './c-printf.js';
import { FIXED_SAMPLE_FIELDS, type FixedSampleOffsets, fixedSampleOffsets } from './sample-offsets.js';
import { type ChainContext, ChainLines, putBytes, TextCache } from './script-fast-chain.js';

/** Fields a fast line can print (sampleText's, without trace). */
const FAST_PRINTED = new Set<ScriptField>([
  'comm',
  'tid',
  'pid',
  'cpu',
  'time',
  'period',
  'event',
  'addr',
  'ip',
  'sym',
  'symoff',
  'dso',
]);

/**
 * Offsets of one attr's sample fields from the record start (-1 = absent) and
 * the record's exact size (with a callchain: its size without the entries;
 * one-u64 fields after them, such as DATA_SRC, included).
 */
export interface FastPlan extends Omit<FixedSampleOffsets, 'end'> {
  size: number;
  /** Where the callchain's nr sits (right after the fixed fields), -1 without CALLCHAIN. */
  callchain: number;
  /** attr.sample_period as perf prints it (samples without PERIOD): "%10s " in bytes, made once per attr. */
  attrPeriod: DataView;
}

const plans = new WeakMap<AttrLayout, FastPlan | null>();

/**
 * The one-u64 fields that may follow the callchain (perf record -d adds
 * DATA_SRC, --weight WEIGHT, --phys-data PHYS_ADDR, …): not printed by a fast
 * line, only counted in the record's size. WEIGHT and WEIGHT_STRUCT share one u64.
 */
const TRAILING_U64S = [
  SampleType.WEIGHT | SampleType.WEIGHT_STRUCT,
  SampleType.DATA_SRC,
  SampleType.TRANSACTION,
  SampleType.PHYS_ADDR,
  SampleType.CGROUP,
  SampleType.DATA_PAGE_SIZE,
  SampleType.CODE_PAGE_SIZE,
];
const TRAILING = TRAILING_U64S.reduce((a, b) => a | b);

/** The plan for a layout, or null when its samples need the general path. */
export function fastPlan(L: AttrLayout): FastPlan | null {
  let p = plans.get(L);
  if (p !== undefined) return p;
  const t = L.sampleType;
  // a layout with a field fixedSampleOffsets does not place takes the general path
  if ((t & ~(FIXED_SAMPLE_FIELDS | SampleType.CALLCHAIN | TRAILING)) !== 0n) p = null;
  else {
    const { ip, tid, time, addr, cpu, period, end } = fixedSampleOffsets(t);
    // CALLCHAIN follows PERIOD (READ, between them, takes the general path): nr, then nr u64s
    const callchain = (t & SampleType.CALLCHAIN) !== 0n ? end : -1;
    const trailing = TRAILING_U64S.filter((bits) => (t & bits) !== 0n).length * 8;
    const size = (callchain < 0 ? end : end + 8) + trailing;
    p = {
      ip,
      tid,
      time,
      addr,
      cpu,
      period,
      size,
      callchain,
      attrPeriod: viewOf(Buffer.from(`${`${L.attr.samplePeriod}`.padStart(10)} `, 'latin1')),
    };
  }
  plans.set(L, p);
  return p;
}

/** The fields a fast line prints, as bits (a Set lookup per field and sample cost a tenth of script's time). */
export const FastField = {
  comm: 1,
  pid: 2,
  tid: 4,
  cpu: 8,
  time: 16,
  period: 32,
  event: 64,
  addr: 128,
  ip: 256,
} as const;

/** `f`'s FastField bits. */
export function fastFieldBits(f: ReadonlySet<ScriptField>): number {
  let bits = 0;
  for (const [name, bit] of Object.entries(FastField)) if (f.has(name as ScriptField)) bits |= bit;
  return bits;
}

/** Whether a field set prints only what a fast line can. */
export function fastPrintable(f: ReadonlySet<ScriptField>): boolean {
  for (const x of f) if (!FAST_PRINTED.has(x)) return false;
  return true;
}

/** What script works out once per attr for its fast lines. */
export interface FastAttr {
  layout: AttrLayout;
  plan: FastPlan;
  /** The printed fields (FastField bits). */
  fields: number;
  cols: SymbolColumns | undefined;
  /** perf prints comm unpadded when ip and a callchain are printed. */
  unpaddedComm: boolean;
}

/** What fast lines print for samples of layout L with fields `fs`, or null when they take the general path. */
export function fastAttr(
  L: AttrLayout,
  fs: FieldSet | undefined,
  attr: EventAttr | undefined,
  hideCallGraph: boolean,
): FastAttr | null {
  const plan = fastPlan(L);
  if (!plan || !fs || fs.has.size === 0 || fs.unprintable || addrColumns(fs.has, attr) || !fastPrintable(fs.has))
    return null;
  const ip = fs.has.has('ip');
  return {
    layout: L,
    plan,
    fields: fastFieldBits(fs.has),
    cols: ip ? symbolColumns(fs.has) : undefined,
    unpaddedComm: ip && fs.callchain && !hideCallGraph,
  };
}

/** What a fast line needs beside the sample: the printer's state at this record. */
export interface FastContext extends ChainContext {
  kernel: boolean;
  event: string;
  eventWidth: number;
  unpaddedComm: boolean;
  ns: boolean;
  /** ip is printed as a callchain when the sample has one (no -G). */
  withChain: boolean;
  comm: (pid: number, tid: number) => string;
  skip: ((cpu: number, pid: number, tid: number, comm: string) => boolean) | undefined;
}

const SPACE = 0x20;

/**
 * The printer's per-run caches. The " ip sym (dso)" texts depend on the maps
 * and symbols: `invalidate(pid)` when a process's maps may change (its MMAP,
 * MMAP2, FORK), `invalidate(KERNEL_SPACE)` when the kernel's may (a kernel
 * MMAP, KSYMBOL).
 */
export class FastLines {
  private readonly enc = new TextEncoder();
  private readonly comms = new Map<string, DataView>();
  private lastComm: string | undefined;
  private lastCommText: DataView | undefined;
  private readonly events = new Map<string, DataView>();
  /** " ip sym (dso)" per symbol columns (TextCache: per address space, then address). */
  private readonly ips = new Map<SymbolColumns | undefined, TextCache>();
  private readonly chains = new Map<SymbolColumns | undefined, ChainLines>();

  /** Forget the texts of one address space: a pid, or KERNEL_SPACE. */
  invalidate(space: number): void {
    for (const m of this.ips.values()) m.invalidate(space);
    for (const c of this.chains.values()) c.invalidate(space);
  }

  private u32(b: Uint8Array, o: number, le: boolean): number {
    return le
      ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0
      : ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  }

  /**
   * Append the line of the sample at b[at …] of `len` bytes (and its callchain
   * lines) to `out`; a sample the filter (`skip`: cpu, pid, tid, comm) drops
   * writes nothing. `f`: the printed fields as FastField bits. false: nothing
   * written, the general path must print it.
   */
  line(
    b: Uint8Array,
    at: number,
    len: number,
    le: boolean,
    plan: FastPlan,
    f: number,
    ctx: FastContext,
    out: ByteText,
  ): boolean {
    let nr = 0;
    if (plan.callchain >= 0) {
      if (len < plan.size || this.u32(b, at + plan.callchain + (le ? 4 : 0), le) !== 0) return false;
      nr = this.u32(b, at + plan.callchain + (le ? 0 : 4), le);
      if (len !== plan.size + nr * 8) return false;
    } else if (len !== plan.size) return false;
    const lo = at + (le ? 0 : 4);
    const hi = at + (le ? 4 : 0);
    let pid = -1;
    let tid = -1;
    if (plan.tid >= 0) {
      pid = this.u32(b, plan.tid + lo, le) | 0;
      tid = this.u32(b, plan.tid + hi, le) | 0;
    }
    const cpu = plan.cpu >= 0 ? this.u32(b, plan.cpu + lo, le) : -1; // u32, as decodeSample
    let time = -1;
    if (plan.time >= 0) {
      const th = this.u32(b, plan.time + hi, le);
      if (th >= 0x200000) return false; // past 2^53 ns: BigInt arithmetic, general path
      time = th * 0x100000000 + this.u32(b, plan.time + lo, le);
    } else if (f & FastField.time) return false;
    let period = -1;
    if (plan.period >= 0 && f & FastField.period) {
      const ph = this.u32(b, plan.period + hi, le);
      if (ph >= 0x200000) return false;
      period = ph * 0x100000000 + this.u32(b, plan.period + lo, le);
    }
    const comm = ctx.comm(pid, tid);
    if (ctx.skip?.(cpu, pid, tid, comm)) return true;
    const start = out.length;
    if (f & FastField.comm) this.comm(out, comm, ctx.unpaddedComm);
    if ((f & (FastField.pid | FastField.tid)) === (FastField.pid | FastField.tid)) {
      out.decSigned(pid, 5);
      out.byte(0x2f); // '/'
      const col = out.length;
      out.decSigned(tid);
      out.fill(SPACE, Math.max(1, 6 - (out.length - col))); // "%-5d "
    } else if (f & (FastField.pid | FastField.tid)) {
      out.decSigned(f & FastField.pid ? pid : tid, 5);
      out.byte(SPACE);
    }
    if (f & FastField.cpu) {
      if (cpu >= 0) {
        out.byte(0x5b); // '['
        out.dec(cpu, 3, PAD_ZERO);
        out.byte(0x5d);
        out.byte(SPACE);
      } else out.str(`[${zeroPad(cpu, 3)}] `);
    }
    if (f & FastField.time) this.time(out, time, ctx.ns);
    if (f & FastField.period) {
      if (period >= 0) {
        out.dec(period, 10);
        out.byte(SPACE);
      } else putBytes(out, plan.attrPeriod);
    }
    if (f & FastField.event) this.event(out, ctx);
    if (f & FastField.addr) {
      if (plan.addr >= 0) out.hex64(this.u32(b, plan.addr + hi, le), this.u32(b, plan.addr + lo, le), 16);
      else out.hex64(0, 0, 16);
    }
    if (f & FastField.ip) {
      if (ctx.withChain && plan.callchain >= 0) {
        out.byte(0x0a);
        if (!this.chainLines(ctx.cols).write(out, b, at + plan.callchain + 8, nr, le, pid, ctx)) {
          out.length = start;
          return false;
        }
      } else if (plan.ip < 0) out.str(` ${'0'.padStart(16)}${this.symText(0, 0, pid, ctx)}`);
      else this.ipText(out, this.u32(b, plan.ip + hi, le), this.u32(b, plan.ip + lo, le), pid, ctx);
    }
    out.byte(0x0a);
    return true;
  }

  private comm(out: ByteText, comm: string, unpadded: boolean): void {
    if (unpadded) {
      out.str(comm);
      out.byte(SPACE);
      return;
    }
    // runs of samples share a thread: the same string again needs no lookup
    let c = comm === this.lastComm ? this.lastCommText : this.comms.get(comm);
    if (c === undefined) {
      c = viewOf(this.enc.encode(`${comm.padStart(16)} `));
      this.comms.set(comm, c);
    }
    this.lastComm = comm;
    this.lastCommText = c;
    putBytes(out, c);
  }

  private event(out: ByteText, ctx: FastContext): void {
    let e = this.events.get(ctx.event);
    if (e === undefined) {
      e = viewOf(this.enc.encode(`${ctx.event.padStart(ctx.eventWidth)}: `));
      this.events.set(ctx.event, e);
    }
    putBytes(out, e);
  }

  /** perf's "%12s: " of secs.usecs, or with --ns "%5lu.%09llu: ", for a time below 2^53 ns. */
  private time(out: ByteText, n: number, ns: boolean): void {
    let secs = Math.floor(n / 1e9);
    if (n - secs * 1e9 < 0) secs--; // n/1e9 can round up to the next integer just below it
    const frac = n - secs * 1e9;
    out.dec(secs, 5);
    // '.', the fraction's digits zero-padded (below 10^9: int32 steps), ': ', written in place
    const w = ns ? 9 : 6;
    out.reserve(w + 3);
    const b = out.buf;
    const k = out.length;
    b[k] = 0x2e;
    let x = ns ? frac : Math.floor(frac / 1000);
    for (let i = w; i >= 1; i--) {
      const q = (x / 10) | 0;
      b[k + i] = 0x30 + (x - q * 10);
      x = q;
    }
    b[k + w + 1] = 0x3a;
    b[k + w + 2] = SPACE;
    out.length = k + w + 3;
  }

  private chainLines(cols: SymbolColumns | undefined): ChainLines {
    let c = this.chains.get(cols);
    if (c === undefined) {
      c = new ChainLines();
      this.chains.set(cols, c);
    }
    return c;
  }

  private ipText(out: ByteText, h: number, l: number, pid: number, ctx: FastContext): void {
    let cache = this.ips.get(ctx.cols);
    if (cache === undefined) {
      cache = new TextCache();
      this.ips.set(ctx.cols, cache);
    }
    // without symbol columns the text is the address alone, the same in every space (the kernel's, say)
    const kernel = ctx.cols === undefined || ctx.kernel;
    if (cache.put(out, cache.space(kernel, pid), h | 0, l | 0)) return;
    // the kernel map is fixed up on the first kernel lookup (ScriptSymbols.fixupKernelMap): not cached before
    const settled = !ctx.kernel || (ctx.syms?.kernelSettled ?? true);
    const text = ` ${hexHalves(h, l).padStart(16)}${this.symText(h, l, pid, ctx)}`;
    out.str(text);
    if (settled) cache.add(cache.space(kernel, pid), h | 0, l | 0, text);
  }

  private symText(h: number, l: number, pid: number, ctx: FastContext): string {
    if (!ctx.cols || !ctx.syms) return '';
    return ctx.syms.text(ctx.cols, pid, (BigInt(h) << 32n) | BigInt(l), ctx.kernel);
  }
}

/** A u64 given as halves, in hex without leading zeros. */
function hexHalves(h: number, l: number): string {
  return h === 0 ? l.toString(16) : h.toString(16) + l.toString(16).padStart(8, '0');
}
