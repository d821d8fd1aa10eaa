/**
 * The pieces of perfItraceSink's sample lines, as bytes made once and then
 * copied into the output's buffer (ByteText): a decode prints one line per
 * instruction or branch, tens of millions of them, from a few thousand
 * distinct addresses and a handful of tasks, times and event names.
 *
 * - AddrText: ` ip sym+0xoff (dso)` per address. The sink's symbol lookup is
 *   a function of the address alone (decode resolves with the recording's
 *   maps as loaded, not as of a time), so a piece never goes stale; a text
 *   poke changes code bytes, not symbols.
 * - LineHead: perf_sample__fprintf_start's columns, per CPU: comm/tid/cpu
 *   while the task is the same object, the time while the timestamp is the
 *   same, period and event (and flags) per event name.
 */
import { ByteText } from '../io/byte-text.js';
import type { Insn } from '../x86/block-cache.js';

/** Where the sink's lines go: the output's byte buffer, and a call after each line (a sink flushes past 64 KiB). */
export interface LineOut {
  readonly bytes: ByteText;
  wrote(): void;
}

const NL = 0x0a;
export const ARROW = Buffer.from(' =>');
/** Targets kept per branch source (a return's callers, an indirect jump's targets): the rest are remade. */
const PAIR_TARGETS = 8;

/** A LineOut that hands each line, without its newline, to `line` (callers that collect strings). */
export function lineCallbackOut(line: (s: string) => void): LineOut {
  const bytes = new ByteText(1 << 12);
  return {
    bytes,
    wrote() {
      const n = bytes.length;
      if (n === 0) return;
      const s = bytes.buf.toString('utf8', 0, bytes.buf[n - 1] === NL ? n - 1 : n);
      bytes.clear();
      line(s);
    },
  };
}

export const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');

/** Distinct addresses kept before the cache starts over (a bound on memory for a huge image). */
const MAX_ADDRS = 1 << 20;

/** ` ip sym+0xoff (dso)` (as -F asks) per address, and per instruction of a cached block. */
export class AddrText {
  private readonly byAddr = new Map<bigint, Uint8Array>();
  /** Keyed by the block's instruction array: the block cache hands the same array while the block lives. */
  private readonly byBlock = new WeakMap<readonly Insn[], (Uint8Array | undefined)[]>();
  /** As byBlock, each piece with the line's newline: the rest of a plain instruction line. */
  private readonly byBlockNl = new WeakMap<readonly Insn[], Uint8Array[]>();

  /** Per branch source, its last targets and the rest of their lines. */
  private readonly byFrom = new Map<bigint, { tos: bigint[]; ends: Uint8Array[]; next: number }>();

  constructor(private readonly text: (addr: bigint) => string) {}

  /** ` from sym (dso) => to sym (dso)` and the newline: a branch line after its start. */
  branchEnd(from: bigint, to: bigint): Uint8Array {
    let p = this.byFrom.get(from);
    if (p === undefined) {
      if (this.byFrom.size >= MAX_ADDRS) this.byFrom.clear();
      p = { tos: [], ends: [], next: 0 };
      this.byFrom.set(from, p);
    }
    const tos = p.tos;
    for (let i = 0; i < tos.length; i++) if (tos[i] === to) return p.ends[i]!;
    const a = this.at(from);
    const c = this.at(to);
    const x = new Uint8Array(a.length + ARROW.length + c.length + 1);
    x.set(a);
    x.set(ARROW, a.length);
    x.set(c, a.length + ARROW.length);
    x[x.length - 1] = NL;
    const k = tos.length < PAIR_TARGETS ? tos.length : p.next++ % PAIR_TARGETS;
    tos[k] = to;
    p.ends[k] = x;
    return x;
  }

  at(addr: bigint): Uint8Array {
    let b = this.byAddr.get(addr);
    if (b === undefined) {
      if (this.byAddr.size >= MAX_ADDRS) this.byAddr.clear();
      b = utf8(this.text(addr));
      this.byAddr.set(addr, b);
    }
    return b;
  }

  /** The pieces of a block's instructions, filled as they are first asked for (`insn(pieces, insns, i)`). */
  block(insns: readonly Insn[]): (Uint8Array | undefined)[] {
    let p = this.byBlock.get(insns);
    if (p === undefined) {
      p = [];
      this.byBlock.set(insns, p);
    }
    return p;
  }

  /** A block's pieces each ending its line (newline included), all made at once. */
  blockLines(insns: readonly Insn[]): Uint8Array[] {
    let p = this.byBlockNl.get(insns);
    if (p === undefined) {
      p = insns.map((insn) => {
        const a = this.at(insn.ip);
        const x = new Uint8Array(a.length + 1);
        x.set(a);
        x[a.length] = NL;
        return x;
      });
      this.byBlockNl.set(insns, p);
    }
    return p;
  }

  insn(pieces: (Uint8Array | undefined)[], insns: readonly Insn[], i: number): Uint8Array {
    let b = pieces[i];
    if (b === undefined) {
      b = this.at(insns[i]!.ip);
      pieces[i] = b;
    }
    return b;
  }
}

/** The text of each part of a line's start (lineStart's, split where its inputs change at different rates). */
export interface HeadParts<Task> {
  /** comm, pid/tid, cpu. */
  who(cpu: number, task: Task, chained: boolean): string;
  /** The time column of the sample's timestamp (TSC), or ''. */
  when(tsc: bigint): string;
  /** The timestamps [lo, hi) around `tsc` whose time column is the same text (the same microsecond). */
  whenSpan(tsc: bigint): { lo: bigint; hi: bigint };
  /** period, event, flags. */
  what(event: string, n: bigint, flags: number): string;
}

interface Joined<Task> {
  task: Task;
  chained: boolean;
  event: string;
  flags: number;
  who: Uint8Array;
  when: When;
  what: Uint8Array;
  bytes: Uint8Array;
}

interface Who<Task> {
  task: Task;
  chained: boolean;
  bytes: Uint8Array;
}

/** A time column and the timestamps that print it. */
interface When {
  lo: bigint;
  hi: bigint;
  bytes: Uint8Array;
}

/** perf_sample__fprintf_start as bytes, each part remade only when its inputs change. */
export class LineHead<Task> {
  private readonly who: (Who<Task> | undefined)[] = [];
  private readonly when: (When | undefined)[] = [];
  /** Period 1: per event name, per flags. */
  private readonly what1 = new Map<string, Map<number, Uint8Array>>();
  /** Per CPU, the last whole start of period 1, what it was asked for with and the parts it was joined from. */
  private readonly joined: (Joined<Task> | undefined)[] = [];

  constructor(private readonly parts: HeadParts<Task>) {}

  write(b: ByteText, cpu: number, task: Task, chained: boolean, tsc: bigint, event: string, n: bigint, flags: number) {
    if (n === 1n) {
      b.append(this.bytes(cpu, task, chained, tsc, event, flags));
      return;
    }
    b.append(this.whoOf(cpu, task, chained));
    b.append(this.whenOf(cpu, tsc).bytes);
    b.str(this.parts.what(event, n, flags));
  }

  /** The start of a line of period 1 (one copy for the samples of a decoder state: the same bytes). */
  bytes(cpu: number, task: Task, chained: boolean, tsc: bigint, event: string, flags: number): Uint8Array {
    const last = this.joined[cpu];
    if (
      last !== undefined &&
      tsc >= last.when.lo &&
      tsc < last.when.hi &&
      last.task === task &&
      last.event === event &&
      last.flags === flags &&
      last.chained === chained
    )
      return last.bytes;
    const who = this.whoOf(cpu, task, chained);
    const when = this.whenOf(cpu, tsc);
    let byFlags = this.what1.get(event);
    if (byFlags === undefined) {
      byFlags = new Map();
      this.what1.set(event, byFlags);
    }
    let what = byFlags.get(flags);
    if (what === undefined) {
      what = utf8(this.parts.what(event, 1n, flags));
      byFlags.set(flags, what);
    }
    let bytes: Uint8Array;
    if (last !== undefined && last.who === who && last.when.bytes === when.bytes && last.what === what) {
      bytes = last.bytes;
    } else {
      bytes = new Uint8Array(who.length + when.bytes.length + what.length);
      bytes.set(who);
      bytes.set(when.bytes, who.length);
      bytes.set(what, who.length + when.bytes.length);
    }
    this.joined[cpu] = { task, chained, event, flags, who, when, what, bytes };
    return bytes;
  }

  private whoOf(cpu: number, task: Task, chained: boolean): Uint8Array {
    let w = this.who[cpu];
    if (w === undefined || w.task !== task || w.chained !== chained) {
      w = { task, chained, bytes: utf8(this.parts.who(cpu, task, chained)) };
      this.who[cpu] = w;
    }
    return w.bytes;
  }

  private whenOf(cpu: number, tsc: bigint): When {
    let w = this.when[cpu];
    if (w === undefined || tsc < w.lo || tsc >= w.hi) {
      const { lo, hi } = this.parts.whenSpan(tsc);
      w = { lo, hi, bytes: utf8(this.parts.when(tsc)) };
      this.when[cpu] = w;
    }
    return w;
  }
}

/** Every timestamp: a time column that does not depend on it (none, or untimed decoding's 0). */
export const ALL_TSC = { lo: -(1n << 64n), hi: 1n << 65n };

/**
 * The timestamps [lo, hi) around `tsc` whose perf time `time(x)` (monotonic) falls in the same unit of
 * `unit` ns as time(tsc); [tsc, tsc + 1) when the inverse `tscOf` does not land within a few steps.
 */
export function timeSpan(
  tsc: bigint,
  unit: bigint,
  time: (tsc: bigint) => bigint,
  tscOf: (ns: bigint) => bigint,
): { lo: bigint; hi: bigint } {
  const t = time(tsc);
  const base = t - (t % unit);
  const lo = firstAt(base, tsc, time, tscOf);
  const hi = firstAt(base + unit, tsc + 1n, time, tscOf);
  if (lo === undefined || hi === undefined || lo > tsc || hi <= tsc) return { lo: tsc, hi: tsc + 1n };
  return { lo, hi };
}

/** The first timestamp whose time is at least `ns` (undefined: not found near the inverse's guess). */
function firstAt(
  ns: bigint,
  near: bigint,
  time: (tsc: bigint) => bigint,
  tscOf: (ns: bigint) => bigint,
): bigint | undefined {
  let x = tscOf(ns);
  // a guess far off (times wrapping around zero): give up rather than walk
  if (x > near + (1n << 40n) || x < near - (1n << 40n)) return undefined;
  for (let i = 0; i < 64 && x > 0n && time(x - 1n) >= ns; i++) x--;
  for (let i = 0; i < 64 && time(x) < ns; i++) x++;
  if (time(x) < ns || (x > 0n && time(x - 1n) >= ns)) return undefined;
  return x;
}
