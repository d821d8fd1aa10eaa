/**
 * perf 6.1's `perf script --itrace=…` sample lines with perf's default
 * fields and `-F` (builtin-script.c process_event, perf_sample__fprintf_bts,
 * sample__fprintf_sym, perf_sample__fprintf_insn): comm, tid, cpu, time,
 * period, event, `ip sym+off (dso)`, and for branches `=> addr sym+off (dso)`.
 * Instruction samples take the normal path, branch samples the BTS one
 * (synthesized `branches` events are BTS-like: hardware branch-instructions,
 * period 1), which prints the target after the source.
 *
 * A sample's time is perf's ptq->timestamp: the decoder's timestamp, set to
 * the error's estimate after an error and raised again by a later, larger one.
 */
import type { FlowError, FlowSink, InsnClock } from '../intelpt/flow/cpu-flow.js';
import { perfTimeToTsc, tscToPerfTime, type PtTimeConv } from '../intelpt/flow/time-conv.js';
import type { Insn } from '../x86/block-cache.js';
import type { ItraceLineField } from './itrace-fields.js';
import { perfErrorLine } from './itrace.js';
import { InsnPeriod } from './itrace-period.js';
import type { ItracePeriod } from './itrace-options.js';
import { CallIndent, paddedDso, threadKey } from './itrace-callindent.js';
import { branchFlagsOf, branchSampleFlags, IP_FLAG, insnTypeFlags } from './itrace-flags.js';
import { symText, whatText, whenText, whoText } from './itrace-line-start.js';
import { LastBranch } from './itrace-last-branch.js';
import {
  ALL_TSC,
  ARROW,
  AddrText,
  LineHead,
  lineCallbackOut,
  timeSpan,
  utf8,
  type LineOut,
} from './itrace-line-bytes.js';
import { powerSynthText } from './itrace-power.js';
import { chainLines, sampleChain, sampleChainLate } from './itrace-callchain.js';
import type { CbrScale } from '../intelpt/flow/time-conv.js';

export {
  ITRACE_LINE_FIELDS,
  parseItraceFields,
  type ItraceFields,
  type ItraceLineField,
} from './itrace-fields.js';

/** Which branches perf samples: `c` calls (and async, trace end), `r` returns (and trace begin); none = all. */
export interface BranchFilter {
  calls: boolean;
  returns: boolean;
}

/** The task perf attributes a CPU's samples to at a time (pid/tid -1 and comm ":-1" when unknown). */
/** A decode error with the task perf names in its line (pid/tid -1 when none is known). */
export type TaskError = FlowError & { pid: number; tid: number };

export interface ItraceTask {
  pid: number;
  tid: number;
  comm: string;
}

export interface PerfItraceOptions {
  instructions: boolean;
  branches: boolean;
  errors: boolean;
  /** `p`: power-event samples (psb, cbr, …), printed with `synthFields`; cbrScale gives their frequency. */
  power?: { synthFields: ReadonlySet<ItraceLineField>; scale: CbrScale };
  /** perf's symbol_conf.pad_output_len_dso (--call-trace: 50): dso names in callindent padded to it. */
  dsoPad?: number;
  filter: BranchFilter;
  fields: ReadonlySet<ItraceLineField>;
  userSet: boolean;
  /** Event names, and the width perf pads them to (the longest event name of the session). */
  insnEvent: string;
  branchEvent: string;
  eventWidth: number;
  cpu?: number;
  timeConv?: PtTimeConv;
  /**
   * Untimed decoding: perf still prints a time column (0.000000) when the file's first hardware event
   * has TIME, since perf script checks each output type's fields against its first event only.
   */
  zeroTime?: boolean;
  /** `sym+0xoff` (or the name alone when `off` is false) and the dso name; '[unknown]' as perf prints. */
  symbol(addr: bigint): { name: string | undefined; start: bigint; dso: string };
  /** The task of the CPU's queue now (perf's ptq->pid/tid and that thread's comm). */
  task(cpu: number): ItraceTask;
  /** Which instructions are sampled (perf's i period). */
  period: ItracePeriod;
  /** Times with nanoseconds (perf's --ns, implied by --insn-trace). */
  ns?: boolean;
  /** Samples not printed at the start (`s`). */
  skip: number;
  /** `l[N]`: each instruction sample carries its thread's last N branches (0: none). */
  lastBranch?: number;
  /** `g[N]`: each instruction and power sample carries a callchain from its thread's stack (0: none). */
  callchain?: number;
  /** `G[N]` / `L[N]`: callchains / last branches on the other events' samples (0: none). */
  addCallchain?: number;
  addLastBranch?: number;
  /** machine__kernel_start: where callchains switch to kernel context. */
  kernelStart?: bigint;
  /** intel_pt_tracing_kernel: L keeps 1024 more branches (those between an event and its sample). */
  kernelTraced?: boolean;
  /** The instruction's bytes (for `insn`). */
  bytes(ip: bigint, len: number): Uint8Array;
  /** The bytes of the instruction at ip (its length decoded). */
  insnAt(ip: bigint): Uint8Array;
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16);
const NL = 0x0a;
/** A sample without ADDR: its addr column (perf prints 0). */
const ZERO_ADDR = utf8(hex16(0n));

/** perf_sample__fprintf_start: comm, tid/pid, cpu, time, period, event, as -F asks; `time` in perf ns. */
function lineStart(
  o: PerfItraceOptions,
  cpu: number,
  time: bigint | undefined,
  event: string,
  n: bigint,
  task: ItraceTask | undefined,
  flags = 0,
  f: ReadonlySet<ItraceLineField> = o.fields,
  chained = false,
): string {
  return whoText(f, cpu, task, chained) + whenText(!!o.ns, f, time) + whatText(o.eventWidth, f, event, n, flags);
}

/**
 * perf script's line for a sample of another event in the recording (a hardware or software event
 * without callchain): the same default fields as the synthesized samples, from the sample itself.
 */
export function otherSampleLine(
  o: PerfItraceOptions,
  s: { cpu: number; time: bigint; pid: number; tid: number; ip: bigint; period: bigint },
  event: string,
  comm: string,
  late: { chain?: string | undefined; brstack?: string } = {},
): string {
  const f = o.fields;
  const task = { pid: s.pid, tid: s.tid, comm };
  // its own time, printed even when the trace is decoded timeless
  let line = lineStart(o, s.cpu, s.time, event, s.period, task, 0, f, late.chain !== undefined);
  // perf lets -F addr through on AUXTRACE files (allow_user_set): a sample without ADDR prints 0
  if (f.has('addr')) line += hex16(0n);
  if (f.has('ip'))
    line += late.chain !== undefined ? `\n${late.chain}` : ` ${hex16(s.ip)}${symText(o.symbol, s.ip, o.fields)}`;
  return line + (late.brstack ?? '');
}

/** A sink that also gives other events' samples their `G` callchain and `L` branch entries. */
export type PerfItraceSink = FlowSink & {
  late(s: { cpu: number; pid: number; tid: number; ip: bigint }): { chain?: string; brstack?: string };
};

/** A sink printing perf script's default-format itrace lines (samples and errors, as perf interleaves them). */
export function perfItraceSink(
  o: PerfItraceOptions,
  to: LineOut | ((s: string) => void),
  errors: TaskError[] = [],
): PerfItraceSink {
  const f = o.fields;
  const out = typeof to === 'function' ? lineCallbackOut(to) : to;
  const b = out.bytes;
  const line = (s: string): void => {
    b.str(s);
    b.byte(NL);
    out.wrote();
  };
  const tc = o.timeConv;
  /** ptq->timestamp per CPU. */
  const now = new Map<number, bigint>();
  const timeOf = (cpu: number, tsc: bigint): bigint => {
    const t = now.get(cpu);
    if (t === undefined || tsc > t) {
      now.set(cpu, tsc);
      return tsc;
    }
    return t;
  };
  /** perf's thread stacks: a call stack per thread with g, G or callindent (perf's callstack), branches with l/L. */
  const callstack = !!(o.callchain || o.addCallchain || f.has('callindent'));
  const stacks = callstack ? new CallIndent() : undefined;
  const chained = !!o.callchain && f.has('ip');
  const withTask = f.has('comm') || f.has('tid') || f.has('pid');
  const head = new LineHead<ItraceTask | undefined>({
    who: (cpu, task, chain) => whoText(f, cpu, task, chain),
    when: (tsc) => whenText(!!o.ns, f, tc ? tscToPerfTime(tsc, tc) : o.zeroTime ? 0n : undefined),
    whenSpan: (tsc) =>
      tc && f.has('time')
        ? timeSpan(
            tsc,
            o.ns ? 1n : 1000n,
            (x) => tscToPerfTime(x, tc),
            (ns) => perfTimeToTsc(ns, tc),
          )
        : ALL_TSC,
    what: (event, n, flags) => whatText(o.eventWidth, f, event, n, flags),
  });
  /** A sample line's start, into the output (`tsc`: the sample's ptq->timestamp). */
  // flags not shown are not part of the start: lines of any branch class share it
  const start = (cpu: number, tsc: bigint, event: string, n: bigint, flags = 0, chain = false): void =>
    head.write(b, cpu, taskOf(cpu), chain, tsc, event, n, showFlags ? flags : 0);
  const taskOf = (cpu: number): ItraceTask | undefined => (withTask ? o.task(cpu) : undefined);
  const addrs = new AddrText((a) => ` ${hex16(a)}${symText(o.symbol, a, f)}`);
  const showIp = f.has('ip');
  const showAddr = f.has('addr');
  const showInsn = f.has('insn') || f.has('insnlen');
  const showFlags = f.has('flags');
  const end = (): void => {
    b.byte(NL);
    out.wrote();
  };
  const ks = o.kernelStart ?? 1n << 63n;
  // perf script prints at least the synthesized chains' size (scripting_max_stack)
  const maxStack = Math.max(127, o.callchain ?? 0);
  const keyOf = (cpu: number): string | undefined => {
    const t = o.task(cpu);
    return threadKey(t.pid, t.tid, cpu, callstack);
  };
  /** The callchain lines of a synthesized sample at `ip` (thread_stack__sample), with -F's symbol columns. */
  const chainOf = (cpu: number, ip: bigint, sf: ReadonlySet<ItraceLineField> = f): string | undefined => {
    if (!o.callchain || !sf.has('ip')) return undefined;
    const key = keyOf(cpu);
    const rets = key !== undefined && stacks ? stacks.frames(key) : [];
    return chainLines(sampleChain(rets, ip, o.callchain + 1, ks), maxStack, (a) => symText(o.symbol, a, sf));
  };
  const insnText = (ip: bigint, len: number, bytes?: Uint8Array): string => {
    let s = '';
    if (f.has('insnlen')) s += ` ilen: ${len}`;
    if (f.has('insn') && len) {
      s += ' insn:';
      for (const b of bytes ?? o.bytes(ip, len)) s += ` ${b.toString(16).padStart(2, '0')}`;
    }
    return s;
  };
  const only = o.cpu;
  const indent = f.has('callindent') ? stacks : undefined;
  const brSize = o.lastBranch || o.addLastBranch || 0;
  // br_stack_sz_plus: L keeps the branches between an event and its sample too
  const ring = o.addLastBranch ? brSize + (o.kernelTraced ? 1024 : 1) : brSize;
  const lbr = brSize ? new LastBranch(ring, brSize) : undefined;
  const brSym = f.has('brstacksym') && !f.has('brstack');
  const brShown = f.has('brstack') || f.has('brstacksym');
  /** Instruction lines of the ip column alone after the start: no addr, insn, flags, callchain or branch stack. */
  const plain = showIp && !showAddr && !showInsn && !showFlags && !o.callchain && !(lbr && o.lastBranch && brShown);
  /** perf_sample__fprintf_brstack(sym) of an instruction sample on `cpu` (its branch stack as of now). */
  const brstack = (cpu: number): string => {
    if (!lbr || !o.lastBranch || !brShown) return '';
    const key = keyOf(cpu);
    return key === undefined ? '' : lbr.text(key, brSym, f.has('dso'), o.symbol);
  };
  const sink: PerfItraceSink = {
    late: (s) => {
      const key = threadKey(s.pid, s.tid, s.cpu, callstack);
      const r: { chain?: string; brstack?: string } = {};
      if (o.addCallchain && f.has('ip')) {
        const rets = key !== undefined && stacks ? stacks.frames(key) : [];
        const chain = sampleChainLate(rets, s.ip, o.addCallchain, ks);
        r.chain = chainLines(chain, maxStack, (a) => symText(o.symbol, a, f));
      }
      if (o.addLastBranch && lbr && brShown && key !== undefined)
        r.brstack = lbr.lateText(key, s.ip, ks, brSym, f.has('dso'), o.symbol);
      return r;
    },
    error: (e) => {
      if (only !== undefined && e.cpu !== only) return;
      release();
      now.set(e.cpu, e.estTsc);
      // perf counted the branch it failed at towards the instruction period (a sample due there is lost)
      if (e.droppedBranch) {
        period.step(e.cpu, e.tsc, true, true);
        lastInsn.set(e.cpu, e.ip);
      }
      const task = o.task(e.cpu);
      errors.push({ ...e, pid: task.pid, tid: task.tid });
      if (o.errors) line(perfErrorLine(e, tc, task));
    },
  };
  sink.queueTime = (cpu, tsc) => {
    now.set(cpu, tsc);
  };
  let events = 0;
  /** Per CPU, the last branch walked: perf's state still holds its bytes at the next trace begin. */
  const lastInsn = new Map<number, bigint>();
  /** perf's initial_skip: the first `skip` samples (of every kind together) are not printed. */
  const skipped = (): boolean => o.skip > 0 && events++ < o.skip;
  const period = new InsnPeriod(o.period, tc);
  /** Per CPU, the instructions of the samples `s` skipped. */
  const unsampled = new Map<number, bigint>();
  /** An instruction sample of a branch waiting for the decoder's next report, which tells if it ended the trace. */
  let held: { cpu: number; ip: bigint; flags: number; write: (flags: number) => void } | undefined;
  const release = (end = false): void => {
    if (!held) return;
    const h = held;
    held = undefined;
    h.write(end ? h.flags | IP_FLAG.TRACE_END : h.flags);
  };
  /** An instruction sample's line; `ipText`: its ` ip sym (dso)` piece. */
  const insnLine = (
    cpu: number,
    task: ItraceTask | undefined,
    t: bigint,
    n: bigint,
    insn: Insn,
    flags: number,
    ipText: Uint8Array,
    br: string,
    chain: string | undefined,
  ): void => {
    head.write(b, cpu, task, chained, t, o.insnEvent, n, flags);
    if (showAddr) b.append(ZERO_ADDR);
    if (showIp) {
      if (chain === undefined) b.append(ipText);
      else b.str(`\n${chain}`);
    }
    if (br) b.str(br);
    if (showInsn) b.str(insnText(insn.ip, insn.length));
    end();
  };
  const everyPlain = plain && period.every && !o.skip;
  /**
   * `i0ns` with perf's fields: every instruction a sample, the same decoder state for all (perf yields before
   * the first or not at all), the same line start, the period of the first carrying the instructions lost.
   */
  const everyLines = (cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint, at?: InsnClock) => {
    if (from >= to) return;
    if (at?.hold?.(tsc)) return from;
    const t = timeOf(cpu, tsc);
    const task = taskOf(cpu);
    const ends = addrs.blockLines(insns);
    let i = from;
    const n = period.everyStep(cpu);
    if (n !== 1n) {
      head.write(b, cpu, task, chained, t, o.insnEvent, n, 0);
      b.append(ends[i++]!);
    }
    const s1 = head.bytes(cpu, task, chained, t, o.insnEvent, 0);
    for (; i < to; i++) {
      b.append(s1);
      b.append(ends[i]!);
    }
    out.wrote();
  };
  if (o.instructions) {
    sink.insns = (cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint, at?: InsnClock) => {
      if (only !== undefined && cpu !== only) return;
      release();
      if (everyPlain) return everyLines(cpu, insns, from, to, tsc, at);
      let t: bigint | undefined;
      let task: ItraceTask | undefined;
      let pieces: (Uint8Array | undefined)[] | undefined;
      /** The start of this call's lines of period 1 (perf's default fields: all but the ip column). */
      let start1: Uint8Array | undefined;
      for (let i = from; i < to; i++) {
        const insn = insns[i]!;
        let n = period.sample(cpu, tsc, insn.op !== 'other' || (!!at?.end && i === to - 1), at, i - from);
        if (n < 0n) return i; // perf's queue yields at this sample's state: it comes on resume
        if (!n) continue;
        // a skipped sample leaves perf's last_insn_cnt as it was: the next sample's period counts its instructions
        if (skipped()) {
          unsampled.set(cpu, (unsampled.get(cpu) ?? 0n) + n);
          continue;
        }
        if (unsampled.size) {
          const u = unsampled.get(cpu);
          if (u) {
            n += u;
            unsampled.delete(cpu);
          }
        }
        // one decoder state per call: its timestamp and task are the same for every sample of it
        if (t === undefined) {
          t = timeOf(cpu, tsc);
          task = taskOf(cpu);
          pieces = addrs.block(insns);
        }
        const ipText = addrs.insn(pieces!, insns, i);
        if (plain && n === 1n) {
          start1 ??= head.bytes(cpu, task, chained, t, o.insnEvent, 0);
          b.append(start1);
          b.append(ipText);
          end();
          continue;
        }
        // perf's instruction samples carry the flags of the state they come from: the instruction's branch class
        const fl = showFlags ? insnTypeFlags(insn.op) : 0;
        // the branch stack as of this instruction (its own branch is pushed after the sample, as perf does)
        const br = brstack(cpu);
        const chain = chainOf(cpu, insn.ip);
        // a block's last branch may end the trace (TIP.PGD next): its flags then say `tr end`
        if (fl && i === insns.length - 1 && insn.op !== 'jcc') {
          const [tt, nn, tk] = [t, n, task];
          held = { cpu, ip: insn.ip, flags: fl, write: (x) => insnLine(cpu, tk, tt, nn, insn, x, ipText, br, chain) };
        } else insnLine(cpu, task, t, n, insn, fl, ipText, br, chain);
      }
    };
  }
  if (o.instructions) {
    // quick decoding: every sample the decoder reports, period 1 (perf ignores the instruction period)
    sink.quick = (cpu, ip, tsc, branch) => {
      if (only !== undefined && cpu !== only) return;
      release();
      if (skipped()) return;
      const fl = showFlags ? branchFlagsOf(branch, ip) : 0;
      start(cpu, timeOf(cpu, tsc), o.insnEvent, 1n, fl, chained);
      // the sample's addr is its state's to_ip: the branch target of a FUP's sample
      if (showAddr) b.str(hex16(branch?.to ?? 0n));
      const chain = chainOf(cpu, ip);
      if (showIp) {
        if (chain === undefined) b.append(addrs.at(ip));
        else b.str(`\n${chain}`);
      }
      b.str(brstack(cpu));
      // no instruction was decoded there: perf's insn_len 0, no bytes
      if (showInsn) b.str(insnText(ip, 0));
      end();
    };
  }
  const filter =
    (o.filter.calls ? IP_FLAG.CALL | IP_FLAG.ASYNC | IP_FLAG.TRACE_END : 0) |
    (o.filter.returns ? IP_FLAG.RETURN | IP_FLAG.TRACE_BEGIN : 0);
  /** Branch lines of `ip => addr` alone after the start (perf's default fields). */
  const branchPlain = showIp && (showAddr || !o.userSet) && !indent && !showInsn;
  if (o.branches || period.ticks || (o.instructions && f.has('flags')) || stacks || lbr) {
    sink.branch = (cpu, from, to, kind, tsc, op) => {
      if (only !== undefined && cpu !== only) return;
      release(held?.cpu === cpu && held.ip === from && (kind === 'tr end' || to === 0n));
      if (to === 0n || kind === 'tr end') period.stop(cpu);
      // a queue with no task (tid -1) has no thread: perf keeps no stack for it, its lines are not indented
      const key = stacks || lbr ? (keyOf(cpu) ?? '') : '';
      if (lbr && key) lbr.event(key, cpu, from, to);
      if (!o.branches && !stacks) return;
      const flags = branchSampleFlags(kind, op, from, to);
      if (stacks && key) {
        const len = flags & IP_FLAG.CALL && kind !== 'async' && from ? o.insnAt(from).length : 0;
        stacks.event(key, cpu, flags, from, to, len);
      }
      if (!o.branches) return;
      if (showInsn && from !== 0n && kind !== 'async') lastInsn.set(cpu, from);
      if (filter && !(filter & flags)) return;
      if (skipped()) return;
      start(cpu, timeOf(cpu, tsc), o.branchEvent, 1n, flags);
      if (indent) {
        const dso =
          f.has('dso') && !f.has('ip') && !f.has('addr') ? paddedDso(o.symbol(from).dso, o.dsoPad) : undefined;
        b.str(indent.text(key, flags, from, to, (a) => o.symbol(a).name, dso));
      }
      if (branchPlain) {
        b.append(addrs.branchEnd(from, to));
        out.wrote();
        return;
      }
      if (showIp) b.append(addrs.at(from));
      if (showAddr || !o.userSet) {
        b.append(ARROW);
        b.append(addrs.at(to));
      }
      // the branch instruction's bytes (none for a trace begin or an asynchronous branch: perf's insn_len 0)
      if (showInsn) {
        const at = from !== 0n ? from : lastInsn.get(cpu);
        const code = at !== undefined && kind !== 'async' ? o.insnAt(at) : new Uint8Array(0);
        b.str(insnText(from, code.length, code));
      }
      end();
    };
  }
  const power = o.power;
  if (power) {
    const pf = power.synthFields;
    sink.power = (cpu, e) => {
      if (only !== undefined && cpu !== only) return;
      if (held?.cpu === cpu) release();
      // perf's initial_skip counts these too (a cbr sample is never skipped: see parseItrace)
      if (e.kind !== 'cbr' && skipped()) return;
      const task = pf.has('comm') || pf.has('tid') || pf.has('pid') ? o.task(cpu) : undefined;
      const time = tc ? tscToPerfTime(timeOf(cpu, e.tsc), tc) : o.zeroTime ? 0n : undefined;
      // intel_pt_prep_p_sample: no IP, no flags; with one, the class of the last instruction walked
      const flags = e.ip && pf.has('flags') ? insnTypeFlags(e.op) : 0;
      const chain = chainOf(cpu, e.ip, pf);
      let s = lineStart(o, cpu, time, e.kind, 1n, task, flags, pf, chain !== undefined);
      if (pf.has('synth')) s += powerSynthText(e, power.scale);
      // the state's to_ip (a PSB+ that gave the IP while resyncing: from 0 to there)
      if (pf.has('addr')) s += hex16(e.to ?? 0n);
      if (pf.has('ip')) s += chain !== undefined ? `\n${chain}` : ` ${hex16(e.ip)}${symText(o.symbol, e.ip, pf)}`;
      line(s);
    };
  }
  sink.flush = release;
  return sink;
}
