/**
 * `perf script` sample lines read straight from the record bytes, for the
 * plain samples that are most of a `perf record` file (no callchain, READ,
 * RAW or other variable-size field; text output; the symbol-free fields and
 * perf's default ones: comm tid pid cpu time period event addr ip sym symoff
 * dso). The general path (perf-script.ts printSample) decodes each sample
 * into an object with a BigInt per field and builds several strings; on a
 * 2.3 M-sample file that fed the garbage collector a third of script's time.
 *
 * Here u64s are read as two u32 halves, the pieces that repeat from line to
 * line (the padded comm, "pid/tid", "[cpu]", the period, the event name, and
 * " ip sym+0xoff (dso)" per address) are kept in small caches, and a BigInt
 * is made only on a symbol cache miss. Anything else (a sample whose size is
 * not exactly its fields', a time past 2^53 ns, --time ranges) returns false
 * and takes the general path, which raises the FormatErrors. The text is the
 * general path's byte for byte: test/script-fast.test.ts and
 * test/script-options.test.ts compare it with perf on live recordings.
 */
import type { AttrLayout } from '../perfdata/layout.js';
import { formatPerfTimeNumber } from '../machine/time-format.js';
import type { FieldSet, ScriptField } from './perf-script-fields.js';
import type { ScriptSymbols, SymbolColumns } from './script-symbols.js';
import { zeroPad } from './c-printf.js';
import { FIXED_SAMPLE_FIELDS, type FixedSampleOffsets, fixedSampleOffsets } from './sample-offsets.js';

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

/** Offsets of one attr's sample fields from the record start (-1 = absent) and the record's exact size. */
export interface FastPlan extends Omit<FixedSampleOffsets, 'end'> {
  size: number;
  /** attr.sample_period as perf prints it (samples without PERIOD). */
  attrPeriod: string;
}

const plans = new WeakMap<AttrLayout, FastPlan | null>();

/** The plan for a layout, or null when its samples need the general path. */
export function fastPlan(L: AttrLayout): FastPlan | null {
  let p = plans.get(L);
  if (p !== undefined) return p;
  const t = L.sampleType;
  // a layout with a field fixedSampleOffsets does not place takes the general path
  if ((t & ~FIXED_SAMPLE_FIELDS) !== 0n) p = null;
  else {
    const { ip, tid, time, addr, cpu, period, end } = fixedSampleOffsets(t);
    p = { ip, tid, time, addr, cpu, period, size: end, attrPeriod: `${L.attr.samplePeriod}` };
  }
  plans.set(L, p);
  return p;
}

/** Whether a field set prints only what a fast line can. */
export function fastPrintable(f: ReadonlySet<ScriptField>): boolean {
  for (const x of f) if (!FAST_PRINTED.has(x)) return false;
  return true;
}

/** One cached " ip sym+0xoff (dso)" text, for the address whose high half is `hi`. */
interface IpText {
  hi: number;
  text: string;
}

/**
 * The printer's per-run caches. `invalidate()` whenever maps or symbols may
 * change (MMAP, MMAP2, FORK, KSYMBOL): the " ip sym (dso)" texts depend on them.
 */
export class FastLines {
  private readonly comms = new Map<string, string>();
  private readonly ids = new Map<number, { pid: number; text: string }>();
  private readonly cpus: string[] = [];
  private readonly events = new Map<string, string>();
  private lastPeriod = -1;
  private lastPeriodText = '';
  /** Keyed by (kernel ? -1 : pid), then the address's low half. */
  private ips = new Map<number, Map<number, IpText>>();

  invalidate(): void {
    if (this.ips.size) this.ips = new Map();
  }

  private u32(b: Uint8Array, o: number, le: boolean): number {
    return le
      ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0
      : ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  }

  /**
   * The sample's line, or undefined when it needs the general path. `comm`
   * looks up the thread's name; `skip` is the filter (cpu, pid, tid, comm).
   */
  line(
    b: Uint8Array,
    le: boolean,
    plan: FastPlan,
    fs: FieldSet,
    ctx: {
      kernel: boolean;
      event: string;
      eventWidth: number;
      unpaddedComm: boolean;
      ns: boolean;
      comm: (pid: number, tid: number) => string;
      skip: ((cpu: number, pid: number, tid: number, comm: string) => boolean) | undefined;
      cols: SymbolColumns | undefined;
      syms: ScriptSymbols | undefined;
    },
  ): string | undefined {
    if (b.length !== plan.size) return undefined;
    const lo = le ? 0 : 4;
    const hi = le ? 4 : 0;
    const f = fs.has;
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
      if (th >= 0x200000) return undefined; // past 2^53 ns: BigInt arithmetic, general path
      time = th * 0x100000000 + this.u32(b, plan.time + lo, le);
    } else if (f.has('time')) return undefined;
    const comm = ctx.comm(pid, tid);
    if (ctx.skip?.(cpu, pid, tid, comm)) return '';
    let line = '';
    if (f.has('comm')) {
      if (ctx.unpaddedComm) line += `${comm} `;
      else {
        let c = this.comms.get(comm);
        if (c === undefined) {
          c = `${comm.padStart(16)} `;
          this.comms.set(comm, c);
        }
        line += c;
      }
    }
    if (f.has('pid') || f.has('tid')) line += this.idText(f, pid, tid);
    if (f.has('cpu')) {
      let c = cpu >= 0 && cpu < 4096 ? this.cpus[cpu] : undefined;
      if (c === undefined) {
        c = `[${zeroPad(cpu, 3)}] `;
        if (cpu >= 0 && cpu < 4096) this.cpus[cpu] = c;
      }
      line += c;
    }
    if (f.has('time')) {
      line += ctx.ns ? `${formatNsNumber(time).padStart(15)}: ` : `${formatPerfTimeNumber(time).padStart(12)}: `;
    }
    if (f.has('period')) {
      if (plan.period >= 0) {
        const ph = this.u32(b, plan.period + hi, le);
        if (ph >= 0x200000) return undefined;
        const p = ph * 0x100000000 + this.u32(b, plan.period + lo, le);
        if (p !== this.lastPeriod) {
          this.lastPeriod = p;
          this.lastPeriodText = `${String(p).padStart(10)} `;
        }
        line += this.lastPeriodText;
      } else line += `${plan.attrPeriod.padStart(10)} `;
    }
    if (f.has('event')) {
      let e = this.events.get(ctx.event);
      if (e === undefined) {
        e = `${ctx.event.padStart(ctx.eventWidth)}: `;
        this.events.set(ctx.event, e);
      }
      line += e;
    }
    if (f.has('addr')) line += plan.addr >= 0 ? this.hex16(b, plan.addr, le) : '0'.padStart(16);
    if (f.has('ip')) {
      if (plan.ip < 0) line += ` ${'0'.padStart(16)}${this.symText(0, 0, pid, ctx)}`;
      else line += this.ipText(this.u32(b, plan.ip + hi, le), this.u32(b, plan.ip + lo, le), pid, ctx);
    }
    return `${line}\n`;
  }

  private idText(f: ReadonlySet<ScriptField>, pid: number, tid: number): string {
    const both = f.has('pid') && f.has('tid');
    const key = both ? tid : f.has('pid') ? -2 - pid : tid;
    const hit = this.ids.get(key);
    if (hit && hit.pid === pid) return hit.text;
    const text = both
      ? `${String(pid).padStart(5)}/${String(tid).padEnd(5)} `
      : `${String(f.has('pid') ? pid : tid).padStart(5)} `;
    // tid keys can collide with another pid's after reuse: the entry keeps its pid and is replaced
    this.ids.set(key, { pid, text });
    return text;
  }

  private hex16(b: Uint8Array, o: number, le: boolean): string {
    const h = this.u32(b, o + (le ? 4 : 0), le);
    const l = this.u32(b, o + (le ? 0 : 4), le);
    return hexHalves(h, l).padStart(16);
  }

  private ipText(
    h: number,
    l: number,
    pid: number,
    ctx: { kernel: boolean; cols: SymbolColumns | undefined; syms: ScriptSymbols | undefined },
  ): string {
    const key = ctx.cols === undefined ? -2 : ctx.kernel ? -1 : pid;
    let m = this.ips.get(key);
    if (m === undefined) {
      m = new Map();
      this.ips.set(key, m);
    }
    const hit = m.get(l);
    if (hit && hit.hi === h) return hit.text;
    // the kernel map is fixed up on the first kernel lookup (ScriptSymbols.fixupKernelMap): not cached before
    const settled = !ctx.kernel || (ctx.syms?.kernelSettled ?? true);
    const text = ` ${hexHalves(h, l).padStart(16)}${this.symText(h, l, pid, ctx)}`;
    if (settled && m.size < 1 << 16) m.set(l, { hi: h, text });
    return text;
  }

  private symText(
    h: number,
    l: number,
    pid: number,
    ctx: { kernel: boolean; cols: SymbolColumns | undefined; syms: ScriptSymbols | undefined },
  ): string {
    if (!ctx.cols || !ctx.syms) return '';
    return ctx.syms.text(ctx.cols, pid, (BigInt(h) << 32n) | BigInt(l), ctx.kernel);
  }
}

/** A u64 given as halves, in hex without leading zeros. */
function hexHalves(h: number, l: number): string {
  return h === 0 ? l.toString(16) : h.toString(16) + l.toString(16).padStart(8, '0');
}

/** formatNsTime for a time below 2^53 ns. */
function formatNsNumber(n: number): string {
  let secs = Math.floor(n / 1e9);
  if (n - secs * 1e9 < 0) secs--;
  return `${secs}.${String(n - secs * 1e9).padStart(9, '0')}`;
}
