/**
 * perf script's `callindent` field on synthesized branch samples
 * (builtin-script.c perf_sample__fprintf_callindent, resolve_branch_sym) and
 * the per-thread call stack it indents by (util/thread-stack.c
 * thread_stack__event with callstack on: push at calls, pop at returns and
 * trace begins, what perf's Intel PT decoder feeds it for each branch).
 */
import { IP_FLAG } from './itrace-flags.js';

interface Stack {
  frames: Frame[];
  /** The CPU whose trace last fed the stack (its decoder's trace number, see stack()). */
  cpu: number;
}

interface Frame {
  ret: bigint;
  traceEnd: boolean;
}

export class CallIndent {
  /** Per thread (the idle task per CPU, as perf's thread_stack__per_cpu): its stack of return addresses. */
  private stacks = new Map<string, Stack>();
  /** perf's static `spacing`: the column width, kept while lines fit, for the whole run. */
  private spacing = 0;

  private stack(key: string, cpu: number): Frame[] {
    let s = this.stacks.get(key);
    if (!s) {
      s = { frames: [], cpu };
      this.stacks.set(key, s);
    }
    // perf flushes a thread's stack when the trace number changes (the stack may be invalid): its decoder's
    // trace_nr is the number of its first AUX buffer (intel_pt_get_trace: buffer_nr + 1, kept while buffers
    // are consecutive, as in a full-trace recording), so a thread that moves to another CPU starts afresh
    if (s.cpu !== cpu) {
      s.frames.length = 0;
      s.cpu = cpu;
    }
    return s.frames;
  }

  /** The return addresses on the thread's stack (innermost last), as thread_stack__sample reads them. */
  frames(key: string): readonly bigint[] {
    return this.stacks.get(key)?.frames.map((f) => f.ret) ?? [];
  }

  /** thread_stack__event for a branch of `flags`; `insnLen` the branch instruction's length (0 when async). */
  event(key: string, cpu: number, flags: number, from: bigint, to: bigint, insnLen: number): void {
    const s = this.stack(key, cpu);
    if (flags & IP_FLAG.CALL) {
      if (!to) return;
      const ret = from + BigInt(insnLen);
      // zero-length calls (to the next instruction) are excluded
      if (ret === to) return;
      s.push({ ret, traceEnd: (flags & IP_FLAG.TRACE_END) !== 0 });
    } else if (flags & IP_FLAG.TRACE_BEGIN) {
      pop(s, to);
      // a call made when the trace ended is not expected to return
      while (s.length && s[s.length - 1]?.traceEnd) s.pop();
    } else if (flags & IP_FLAG.RETURN && from) {
      pop(s, to);
    }
  }

  /**
   * The callindent column: `dso` is given when perf prints `(dso)\t` first (dso shown, ip and addr not);
   * `name(addr)` the symbol name at an address (undefined when none).
   */
  text(
    key: string,
    flags: number,
    from: bigint,
    to: bigint,
    name: (addr: bigint) => string | undefined,
    dso: string | undefined,
  ): string {
    const stack = this.stacks.get(key);
    let depth = stack?.frames.length ?? 0;
    // the return was popped already: indent it as its call (a thread with no stack: not at all)
    if (stack && flags & IP_FLAG.RETURN) depth += 1;
    let sym: string | undefined;
    let ip = 0n;
    if (flags & (IP_FLAG.CALL | IP_FLAG.TRACE_BEGIN)) {
      sym = name(to);
      if (sym === undefined) ip = to;
    } else if (flags & (IP_FLAG.RETURN | IP_FLAG.TRACE_END)) {
      sym = name(from);
      if (sym === undefined) ip = from;
    }
    const pre = dso === undefined ? '' : `(${dso})\t`;
    const indent = ' '.repeat(depth * 4);
    let s = sym !== undefined ? indent + sym : ip ? indent + ip.toString(16).padStart(16) : '';
    const len = s.length;
    // perf keeps the width while lines fit, so that the output lines up
    if (len > this.spacing || (len && len < this.spacing - 52)) this.spacing = Math.ceil((len + 4) / 32) * 32;
    if (len < this.spacing) s += ' '.repeat(this.spacing - len);
    return pre + s;
  }
}

function pop(s: Frame[], ret: bigint): void {
  for (let i = s.length; i > 0; ) {
    if (s[--i]?.ret === ret) {
      s.length = i;
      return;
    }
  }
}

/** The dso column of callindent: padded inside its parentheses when perf pads to `w` (map__fprintf_dsoname). */
export function paddedDso(d: string, w: number | undefined): string {
  if (!w) return d;
  // scnprintf_pad into a buffer of w + 1: at most w - 1 characters of the name, spaces up to w
  return d.slice(0, w - 1).padEnd(w);
}

/**
 * The thread whose stacks perf keeps: none for an unknown task; the idle task has one per CPU
 * (thread_stack__per_cpu), found only when it holds a call stack (thread__cpu_stack), which `l` alone does
 * not make.
 */
export function threadKey(pid: number, tid: number, cpu: number, callstack: boolean): string | undefined {
  if (tid === -1) return undefined;
  if (pid === 0 && tid === 0) return callstack ? `idle/${cpu}` : undefined;
  return `${pid}/${tid}`;
}
