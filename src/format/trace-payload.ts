/**
 * The `trace` field of `perf script`: a tracepoint sample's payload printed
 * through its event's `print fmt`, as perf 6.1 prints it with its built-in
 * libtraceevent (event_format__fprintf → pretty_print; no plugins are loaded
 * by perf 6.1 here, so no event has a special handler). The format string is
 * cut into pieces once per event (libtraceevent parse_args), then each sample
 * is printed piece by piece. What libtraceevent would print differently from
 * our reading (an unknown helper, a format it fails to parse) is refused with
 * an error naming the event, never printed differently.
 */
import type { EventFormat, FieldFormat } from '../perfdata/tracing/event-format.js';
import type { PrintArg } from '../perfdata/tracing/print-args.js';
import { binary, castValue, strtoll } from '../perfdata/tracing/print-eval.js';
import type { TracingData } from '../perfdata/tracing/tracing-data.js';
import { type ConvSpec, formatInt, formatPointer, formatStr, parseConv } from './c-printf.js';
import { FormatOptionError } from './errors.js';

/** A kernel address as perf's function resolver names it (machine__resolve_kernel_addr). */
export type KernelResolver = (addr: bigint) => { name: string; start: bigint } | undefined;

type Piece =
  | { lit: string }
  | { kind: 'num' | 'ptr' | 'str'; text: string; ls: number; arg: PrintArg; lenArg?: PrintArg };

/** libtraceevent's names for values some format files leave unexpanded (eval_flag). */
const KNOWN_FLAGS: Record<string, bigint> = {
  HI_SOFTIRQ: 0n,
  TIMER_SOFTIRQ: 1n,
  NET_TX_SOFTIRQ: 2n,
  NET_RX_SOFTIRQ: 3n,
  BLOCK_SOFTIRQ: 4n,
  IRQ_POLL_SOFTIRQ: 5n,
  TASKLET_SOFTIRQ: 6n,
  SCHED_SOFTIRQ: 7n,
  HRTIMER_SOFTIRQ: 8n,
  RCU_SOFTIRQ: 9n,
  HRTIMER_NORESTART: 0n,
  HRTIMER_RESTART: 1n,
};

function evalFlag(s: string): bigint {
  if (/^[0-9]/.test(s)) return BigInt.asUintN(64, strtoll(s));
  return BigInt.asUintN(64, KNOWN_FLAGS[s] ?? -1n);
}

class Unsupported extends Error {}

/** parse_arg_format_pointer: how many letters after %p name a special pointer (only functions supported). */
function pointerExt(fmt: string, at: number): number {
  const c = fmt[at];
  if (c === 'F' || c === 'S' || c === 'f' || c === 's') return 1;
  if (c !== undefined && 'MmIiUh'.includes(c)) throw new Unsupported(`%p${c}`);
  return 0;
}

/** libtraceevent parse_args: literal runs and one piece per conversion. */
function pieces(format: string, args: readonly PrintArg[]): Piece[] {
  const out: Piece[] = [];
  let ai = 0;
  let lit = '';
  const ESC: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\' };
  for (let i = 0; i < format.length; ) {
    const c = format[i]!;
    if (c === '\\') {
      const e = format[i + 1] ?? '';
      lit += ESC[e] ?? e;
      i += 2;
      continue;
    }
    if (c !== '%') {
      lit += c;
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      lit += '%';
      i += 2;
      continue;
    }
    if (lit) out.push({ lit });
    lit = '';
    let ls = 0;
    let lenArg: PrintArg | undefined;
    let j = i + 1;
    let done = false;
    for (; j < format.length && !done; j++) {
      const f = format[j]!;
      if (f === '#' || f === '.' || f === 'z' || f === 'Z' || f === '-' || (f >= '0' && f <= '9')) continue;
      if (f === 'h') ls--;
      else if (f === 'l') ls++;
      else if (f === 'L') ls = 2;
      else if (f === '*') {
        lenArg = args[ai++];
        if (!lenArg) throw new Unsupported('no argument for *');
      } else if (f === 'p' || 'duixXos'.includes(f)) {
        const arg = args[ai++];
        if (!arg) throw new Unsupported('fewer arguments than conversions');
        if (f === 'p') j += pointerExt(format, j + 1);
        if (ls < -2 || ls > 2) throw new Unsupported(`length ${ls}`);
        const kind = f === 'p' ? 'ptr' : f === 's' ? 'str' : 'num';
        out.push({ kind, text: format.slice(i, j + 1), ls, arg, lenArg });
        done = true;
      } else {
        // libtraceevent prints an unknown conversion letter (also '+', ' ', 'c') as ">c<"
        out.push({ lit: `>${f}<` });
        done = true;
      }
    }
    i = j;
  }
  if (lit) out.push({ lit });
  return out;
}

/** Prints payloads of the events one tracing data describes. */
export class TracePayloads {
  private readonly compiled = new Map<number, Piece[] | FormatOptionError>();

  constructor(
    private readonly td: TracingData,
    private readonly resolve: KernelResolver,
  ) {}

  /** The payload of a sample of event `id` (its RAW data), or a FormatOptionError naming the event. */
  text(id: number, raw: Uint8Array): string {
    const ev = this.td.events.get(id);
    if (!ev) throw new FormatOptionError(`-F trace: no format for tracepoint id ${id} in the tracing data`);
    let p = this.compiled.get(id);
    if (p === undefined) {
      p = this.compile(ev);
      this.compiled.set(id, p);
    }
    if (p instanceof FormatOptionError) throw p;
    try {
      return new Sample(ev, raw, this.td, this.resolve).print(p);
    } catch (e) {
      if (e instanceof Unsupported) throw refuse(ev, e.message);
      throw e;
    }
  }

  private compile(ev: EventFormat): Piece[] | FormatOptionError {
    if ('error' in ev.print) return refuse(ev, ev.print.error);
    try {
      return pieces(ev.print.format, ev.print.args);
    } catch (e) {
      if (e instanceof Unsupported) return refuse(ev, e.message);
      throw e;
    }
  }
}

function refuse(ev: EventFormat, why: string): FormatOptionError {
  return new FormatOptionError(
    `-F trace: the print fmt of '${ev.system}:${ev.name}' is not supported yet (${why}); use -F -trace`,
  );
}

/** One sample's payload being printed. */
class Sample {
  private readonly dv: DataView;
  private readonly le: boolean;

  constructor(
    private readonly ev: EventFormat,
    private readonly data: Uint8Array,
    private readonly td: TracingData,
    private readonly resolve: KernelResolver,
  ) {
    this.dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    this.le = !td.bigEndian;
  }

  print(ps: Piece[]): string {
    let out = '';
    for (const p of ps) {
      if ('lit' in p) {
        out += p.lit;
        continue;
      }
      const star = p.lenArg ? Number(BigInt.asIntN(32, this.num(p.lenArg))) : undefined;
      const spec = parseConv(p.text, star);
      if (p.kind === 'num') out += formatInt(spec, this.num(p.arg), [8, 16, 32, 64, 64][p.ls + 2]!);
      else if (p.kind === 'str') out += this.str(spec, p.arg);
      else out += this.pointer(spec, p.arg);
    }
    return out;
  }

  private field(name: string): FieldFormat {
    const f = this.ev.fields.find((x) => x.name === name);
    if (!f) throw new Unsupported(`no field ${name}`);
    return f;
  }

  /** tep_read_number: 1, 2, 4 or 8 bytes, unsigned; other sizes read as 0; past the end: 0. */
  private read(off: number, size: number): bigint {
    if (off < 0 || off + size > this.data.byteLength) return 0n;
    if (size === 1) return BigInt(this.dv.getUint8(off));
    if (size === 2) return BigInt(this.dv.getUint16(off, this.le));
    if (size === 4) return BigInt(this.dv.getUint32(off, this.le));
    if (size === 8) return this.dv.getBigUint64(off, this.le);
    return 0n;
  }

  /** A __data_loc / __rel_loc field: where its data starts and how long it is. */
  private loc(f: FieldFormat): { off: number; len: number } {
    const v = Number(this.read(f.offset, f.size));
    let off = v & 0xffff;
    if (f.dynamic === 'rel_loc') off += f.offset + f.size;
    return { off, len: v >>> 16 };
  }

  private cstr(off: number, max = this.data.byteLength - off): string {
    const end = Math.min(this.data.byteLength, off + Math.max(0, max));
    let z = this.data.indexOf(0, off);
    if (z < 0 || z > end) z = end;
    return Buffer.from(this.data.buffer, this.data.byteOffset + off, Math.max(0, z - off)).toString('utf8');
  }

  /** eval_num_arg, 64-bit (long long operands, as libtraceevent). */
  num(a: PrintArg): bigint {
    switch (a.k) {
      case 'null':
        return 0n;
      case 'atom':
        return a.quoted ? 0n : BigInt.asUintN(64, strtoll(a.text));
      case 'field': {
        const f = this.field(a.name);
        return this.read(f.offset, f.size);
      }
      case 'cast':
        return castValue(this.num(a.item), a.type);
      case 'op': {
        if (a.op === '?') return this.num(this.branch(a));
        if (a.op === '[') return this.index(a.left, this.num(a.right));
        const l = BigInt.asIntN(64, this.num(a.left));
        const r = BigInt.asIntN(64, this.num(a.right));
        const v = binary(a.op, l, r);
        if (v === undefined) throw new Unsupported(`operator ${a.op}`);
        return BigInt.asUintN(64, v);
      }
      case 'dynarray_len':
        return BigInt(this.loc(this.field(a.name)).len);
      case 'flags':
      case 'symbolic':
      case 'string':
        return 0n;
      default:
        throw new Unsupported(a.k === 'call' ? `${a.name}()` : `${a.k} as a number`);
    }
  }

  /** The branch a '?' op takes (its right is the ':' op of the two). */
  private branch(a: Extract<PrintArg, { k: 'op' }>): PrintArg {
    const c = a.right;
    if (c.k !== 'op' || c.op !== ':') throw new Unsupported("'?' without ':'");
    return this.num(a.left) !== 0n ? c.left : c.right;
  }

  /** ARR[i]: a fixed array's element, or (as libtraceevent) the byte offset i into a dynamic array. */
  private index(arr: PrintArg, i: bigint): bigint {
    let type: string | undefined;
    let base = arr;
    while (base.k === 'cast') {
      type ??= base.type;
      base = base.item;
    }
    let v: bigint;
    if (base.k === 'field') {
      const f = this.field(base.name);
      v = this.read(f.offset + Number(i) * f.elementSize, f.elementSize);
    } else if (base.k === 'dynarray') {
      const f = this.field(base.name);
      v = this.read(this.loc(f).off + Number(i), f.elementSize);
    } else throw new Unsupported('index of an expression');
    // eval_type(…, pointer): "T *" casts the element to T; other casts leave it
    return type?.endsWith('*') ? castValue(v, type.slice(0, -1).trim()) : v;
  }

  /** print_str_arg. */
  private str(s: ConvSpec, a: PrintArg): string {
    switch (a.k) {
      case 'atom':
        return formatStr(s, a.text);
      case 'cast':
        return this.str(s, a.item);
      case 'op':
        // print_str_arg: only '?' prints a string
        return a.op === '?' ? this.str(s, this.branch(a)) : '';
      case 'string': {
        const f = this.field(a.name);
        return formatStr(s, this.cstr(this.loc(f).off));
      }
      case 'field': {
        const f = this.field(a.name);
        if (f.dynamic) throw new Unsupported(`%s of REC->${f.name}`);
        // a long-sized non-array field is taken as a pointer: printed as bare hex (no printk formats kept)
        if (f.array === undefined && f.size === this.td.longSize) return this.read(f.offset, f.size).toString(16);
        return formatStr(s, this.cstr(f.offset, f.size));
      }
      case 'flags':
        return this.flags(s, a);
      case 'symbolic': {
        const v = this.num(a.field);
        const hit = a.list.find((e) => evalFlag(e.value) === v);
        return hit ? formatStr(s, hit.str) : `0x${v.toString(16)}`;
      }
      case 'hex':
        return this.hex(a);
      case 'null':
        return '';
      default:
        throw new Unsupported(a.k === 'call' ? `${a.name}()` : `%s of ${a.k}`);
    }
  }

  private flags(s: ConvSpec, a: Extract<PrintArg, { k: 'flags' }>): string {
    let v = this.num(a.field);
    let out = '';
    let printed = false;
    for (const e of a.list) {
      const f = evalFlag(e.value);
      const signed = BigInt.asIntN(64, f);
      if (v === 0n && signed < 0n) {
        out += formatStr(s, e.str);
        break;
      }
      if (signed > 0n && (v & f) === f) {
        if (printed) out += a.delim;
        out += formatStr(s, e.str);
        printed = true;
        v &= ~f;
      }
    }
    if (v !== 0n) out += `${printed ? a.delim : ''}0x${v.toString(16)}`;
    return out;
  }

  private hex(a: Extract<PrintArg, { k: 'hex' }>): string {
    let off: number;
    if (a.field.k === 'dynarray') off = this.loc(this.field(a.field.name)).off;
    else if (a.field.k === 'field') off = this.field(a.field.name).offset;
    else throw new Unsupported('__print_hex of an expression');
    const n = Number(this.num(a.len));
    const bytes: string[] = [];
    for (let i = 0; i < n && off + i < this.data.byteLength; i++)
      bytes.push(this.data[off + i]!.toString(16).padStart(2, '0'));
    return bytes.join(a.sep);
  }

  /** print_arg_pointer: %ps/%pS/%pf/%pF through the kernel's symbols, else glibc's %p. */
  private pointer(s: ConvSpec, a: PrintArg): string {
    const v = this.num(a);
    const ext = s.conv === 'p' ? '' : s.conv;
    if (!ext) return formatPointer(v);
    const fn = this.resolve(v);
    if (!fn) return `0x${v.toString(16)}`;
    return ext === 'S' || ext === 'F' ? `${fn.name}+0x${(v - fn.start).toString(16)}` : fn.name;
  }
}
