/**
 * Intel PT flow decoder for one CPU's trace: walks the code image driven by
 * packets, after the state machine of perf's intel-pt-decoder.c (6.1), so
 * that its error count and its instruction flow match `perf script`. The
 * states (FlowState, flow-types.ts):
 *
 *   NO_PSB      scan to a PSB, read PSB+ (TSC, MODE, FUP), → IN_SYNC if an IP
 *   NO_IP       forget the last IP, then like ERR_RESYNC
 *   ERR_RESYNC  skip to the next packet that gives an IP (TIP/PGE/PGD/FUP/PSB+FUP)
 *   IN_SYNC     read packets: TNT → walk conditional branches (and compressed
 *               returns), TIP/TIP.PGD → walk to an indirect branch, FUP → walk
 *               to the FUP's IP then take the TIP that must follow (an
 *               asynchronous event: interrupt, INT3 trap)
 *
 * Errors carry perf's codes and resync points: a walk that meets a
 * conditional branch where a TIP was due (or a branch before a FUP's IP),
 * an overflow and a never-ending loop resync at the next packet giving an IP;
 * a bad packet at the next PSB. After unreadable code, a bad RET compression,
 * a missing deferred TIP or a missing TIP after FUP, decoding resumes where
 * FlowErrorOptions say (flow-errors.ts; by default at the next packet giving
 * an IP).
 *
 * The decoder can pause before a timing point (a TSC, or a PSB+ holding one)
 * at or after a given TSC: the driver (poke-schedule.ts) uses that to apply
 * each text poke at the first TSC at or after its time, as perf does.
 */
import { PT } from '../packets/kinds.js';
import type { Insn } from '../../x86/block-cache.js';
import { PtErr, resyncStates, type FlowErrorOptions } from './flow-errors.js';
import { NO_STOP } from './flow-sync.js';
import { HOP_IGNORE, HOP_PROCESS } from './quick-hop.js';
import { FupWalk } from './fup-walk.js';
import { PATTERN_BITS } from './tnt-patterns.js';
import { BranchKind, FlowState, Step, WalkStop, type BlockSource, type FlowSink } from './flow-types.js';
import { PACKET_BAD, PACKET_END, PacketReader } from './packet-reader.js';
import { memoryTrace, type TraceSource } from './trace-source.js';
import { PerfClock } from './perf-clock.js';

// The vocabulary callers need with a CpuFlow, from where it lives.
export {
  BranchKind,
  FlowState,
  type BlockSource,
  type FlowError,
  type FlowEvent,
  type FlowSink,
  type InsnClock,
  type PowerEvent,
} from './flow-types.js';
export { PT_ERR_MESSAGES, PtErr, type FlowErrorOptions, type PtErrCode } from './flow-errors.js';

export interface CpuFlowOptions {
  /** Returns may be compressed into TNT bits (the recording's noretcomp bit clear). Default true. */
  retCompression?: boolean;
  errors?: FlowErrorOptions;
  /** Bytes of a TraceSource's trace held at a time (default TRACE_WINDOW, 256 KiB); a Uint8Array is used whole. */
  window?: number;
  /**
   * perf's kernel_start (timed decoding only): a branch from the kernel to below it (a return to user
   * space) takes the estimated time, and the queue yields there when that reaches the stop time.
   */
  kernelStart?: bigint;
  /** perf's quick decoding: 1 (`q`) hops from TIP/FUP/PSB+ to the next without walking code, 2 (`qq`) PSB+ to PSB+. */
  quick?: number;
  /** perf's max_non_turbo_ratio (cbrScale in time-conv.ts): estimated times scale by it over the CBR. */
  maxNonTurboRatio?: number;
  /** MTC timing (perf's mtc_shift, tsc_ctc_ratio_n / _d); none: MTC and TMA packets give no time. */
  mtc?: { shift: number; tscCtcN: number; tscCtcD: number };
  /** Replay TNT patterns when the sink is walkQuiet (default true; false: walk every bit, for comparison). */
  tntPatterns?: boolean;
}

export class CpuFlow extends FupWalk {
  /** The TNT packet's outcomes as u32 halves: bit tntCount-1 is the next one (1 = taken). */
  private tntLo = 0;
  private tntHi = 0;
  /** The TIP (or TIP.PGD) being walked to: its IP compression (0 = no IP given). */
  private tipIpc = 0;
  private readonly retCompression: boolean;
  /** Runs of TNT bits are walked through their patterns (tnt-patterns.ts): the sink wants no branch reports. */
  private readonly patterns: boolean;

  constructor(
    cpu: number,
    trace: TraceSource | Uint8Array,
    blocks: BlockSource,
    sink: FlowSink,
    o: CpuFlowOptions = {},
  ) {
    const src = trace instanceof Uint8Array ? memoryTrace(trace) : trace;
    const clock = new PerfClock({
      mtcShift: o.mtc?.shift ?? 0,
      tscCtcN: o.mtc?.tscCtcN ?? 0,
      tscCtcD: o.mtc?.tscCtcD ?? 0,
      maxNonTurboRatio: o.maxNonTurboRatio ?? 0,
    });
    super(cpu, new PacketReader(src, o.window), blocks, sink, resyncStates(o.errors), clock);
    this.retCompression = o.retCompression ?? true;
    // (a return on a 1 bit is a compressed one only with ret compression)
    this.patterns = (o.tntPatterns ?? true) && !!sink.walkQuiet && !sink.insns && !o.quick && this.retCompression;
    this.kernelStart = o.kernelStart;
    this.quickSync = o.quick ?? 0;
  }

  private readonly kernelStart: bigint | undefined;
  /** A return to user space not reported yet: run() stopped there, its sample comes first on the next run. */
  private pendingUser:
    | { from: bigint; to: bigint; op: string | undefined; est: bigint; insns: readonly Insn[] | undefined }
    | undefined;

  /** The TSC of the timing point run() paused before (the time its next output will carry). */
  pausedTsc(): bigint | undefined {
    if (this.pendingUser) return this.pendingUser.est;
    const t = this.timeAhead();
    const e = this.errTsc;
    return e === undefined || (t !== undefined && t > e) ? t : e;
  }

  /**
   * perf yields only at a decoder state: in sync at code the image does not hold, the walk fails at the
   * next packet and its error comes before any yield (an error is no state; a PSB+ or OVF is one).
   */
  protected override atStop(): boolean {
    if (!super.atStop()) return false;
    // quick decoding walks no code: every packet is a place to yield
    if (this.quickSync || this.st !== FlowState.InSync || this.ip === 0n || this.reader.nextIsPsbOrOvf()) return true;
    const b = this.blocks.get(this.ip);
    return b.insns.length > 0 || (b.stop !== 'invalid' && b.stop !== 'nomap');
  }

  get done(): boolean {
    return this.st === FlowState.NoPsb && this.reader.atEnd;
  }

  /**
   * Decode until the end of the trace, or until the next timing point (TSC
   * packet, or PSB+ holding one) would reach `stopTsc`. Returns true at the end.
   */
  run(stopTsc: bigint = NO_STOP): boolean {
    this.stopTsc = stopTsc;
    this.heldTsc = undefined;
    this.flushUserReturn();
    const held = this.heldReport;
    this.heldReport = undefined;
    held?.();
    for (;;) {
      let r: Step = Step.Ok;
      switch (this.st) {
        case FlowState.NoPsb:
          r = this.sync();
          break;
        case FlowState.NoIp:
          this.reader.last.reset();
          this.ip = 0n;
          r = this.syncIp();
          break;
        case FlowState.ErrResync:
          r = this.syncIp();
          break;
        case FlowState.InSync:
          r = this.walkTrace();
          break;
        case FlowState.Tnt:
          r = this.walkTnt();
          break;
        case FlowState.Tip:
        case FlowState.TipPgd:
          r = this.walkTip();
          break;
        case FlowState.Fup:
          r = this.walkFup();
          if (r === Step.Again) r = this.walkFupTip();
          break;
      }
      if (r === Step.Pause) return false;
      if (r === Step.End) {
        this.st = FlowState.NoPsb;
        this.reader.toEnd();
        return true;
      }
    }
  }

  // ---- IN_SYNC -----------------------------------------------------------

  private walkTrace(): Step {
    const rd = this.reader;
    for (;;) {
      if (this.atStop()) return Step.Pause;
      const t = this.next();
      if (this.quickSync && t >= 0) {
        const h = this.hop(t);
        if (h === HOP_IGNORE) continue;
        if (h !== HOP_PROCESS) return h;
      }
      switch (t) {
        case PACKET_END:
          return Step.End;
        case PACKET_BAD:
          return Step.Error;
        case PT.TNT8:
        case PT.TNT64: {
          const r = rd.raw;
          if (!r.count) break;
          this.tntCount = r.count;
          this.tntLo = r.lo >>> 0;
          this.tntHi = r.hi >>> 0;
          this.st = FlowState.Tnt;
          const w = this.walkTnt();
          if (w === Step.Again) break;
          return w;
        }
        case PT.TIP_PGD:
          this.tipIpc = rd.raw.ipc;
          if (this.tipIpc) rd.applyIp();
          this.st = FlowState.TipPgd;
          return this.walkTip();
        case PT.TIP_PGE:
          this.pge = true;
          if (rd.raw.ipc === 0) break;
          this.setIp();
          this.enabled();
          this.traceBegin();
          // perf's hop mode resamples there: the trace begin's target as an instruction sample
          if (this.quickSync) this.sink.quick?.(this.cpu, this.ip, this.tsc);
          return Step.Ok;
        case PT.OVF:
          return this.overflow();
        case PT.TIP:
          this.tipIpc = rd.raw.ipc;
          if (this.tipIpc) rd.applyIp();
          this.st = FlowState.Tip;
          return this.walkTip();
        case PT.FUP: {
          if (rd.raw.ipc === 0) break;
          rd.applyIp();
          if (!this.pge) {
            this.ip = rd.last.ip;
            break;
          }
          this.st = FlowState.Fup;
          const w = this.walkFup();
          if (w !== Step.Again) return w;
          return this.walkFupTip();
        }
        case PT.PSB:
          return this.psbInSync();
        case PT.TSC:
          this.setTsc();
          break;
        case PT.MTC:
        case PT.TMA:
        case PT.CYC:
          this.timingPacket(t);
          break;
        case PT.MODE_EXEC:
          this.modeExec();
          break;
        case PT.CBR:
          this.readCbr();
          // a changed ratio is a state of its own (perf: state.type 0, from_ip the decoder's IP)
          if (this.cbrChanged) {
            this.stateDone(this.ip);
            return Step.Ok;
          }
          break;
        case PT.PWRE:
        case PT.PWRX:
          this.powerState(rd.raw.type, rd.raw.lo);
          return Step.Ok;
        case PT.EXSTOP:
          // EXSTOP with its IP bit set waits for a FUP (perf's set_fup_exstop): not followed here
          if (rd.raw.flag) break;
          this.powerState(PT.EXSTOP, 0);
          return Step.Ok;
        default:
          break;
      }
    }
  }

  /** A PSB+ while in sync (the PSB just read; the reader steps back onto it). */
  private psbInSync(): Step {
    this.reader.unread();
    // perf's intel_pt_psb_with_fup: a PSB+ holding a FUP while tracing
    // is on means execution reached that IP: walk there first.
    const fup = this.pge ? this.reader.psbFupIp() : undefined;
    if (fup !== undefined) {
      const c = this.walkInsn(fup);
      if (c === WalkStop.Error) return Step.Error;
      if (c === WalkStop.Paused) return Step.Pause;
      if (c === WalkStop.Indirect) return this.fail(PtErr.MISMAT, 'Unexpected indirect branch', FlowState.ErrResync);
      if (c === WalkStop.Conditional)
        return this.fail(PtErr.MISMAT, 'Unexpected conditional branch', FlowState.ErrResync);
    }
    const r = this.walkPsb(true); // which clears the return stack, as every PSB+ read does
    if (r !== Step.Ok) return r;
    // perf's PSB_EVT state, timed by the PSB+: perf yields after it when that reaches the stop
    // measured: perf's queue time there is the PSB+'s TSC packet, also where the clock kept a later time
    // (a backwards TSC suppressed), as when it yields before a PSB+ without FUP
    const t = this.psbTsc();
    if (fup !== undefined && !this.quickSync && this.holdState(t)) {
      this.heldReport = () => this.psbReport(t);
      return Step.Pause;
    }
    this.psbReport(t);
    return r;
  }

  /** Report the PSB+ state read in sync, the queue's time becoming `t` (psbTsc). */
  private psbReport(t: bigint): void {
    const c = this.clock;
    const before = c.reported;
    this.psbDone(this.psbIp);
    if (t < c.timestamp) c.reported = before > t ? before : t;
  }

  /** The time of a PSB+ state just read: its TSC packet's when it held one. */
  private psbTsc(): bigint {
    const c = this.clock;
    return this.psbHadTsc && c.lastTsc < c.timestamp ? c.lastTsc : c.timestamp;
  }

  /** Take the next TNT outcome (true = taken). */
  private popTnt(): boolean {
    return this.tntBit(--this.tntCount);
  }

  /** TNT outcome bit i (0 = the packet's last), from the u32 halves: no float division per bit. */
  private tntBit(i: number): boolean {
    return ((i < 32 ? this.tntLo >>> i : this.tntHi >>> (i - 32)) & 1) === 1;
  }

  /** The next run of TNT bits (at most PATTERN_BITS) as its pattern's key bits: the next bit highest. */
  private tntRun(k: number): number {
    const sh = this.tntCount - k;
    const v = sh >= 32 ? this.tntHi >>> (sh - 32) : sh ? (this.tntLo >>> sh) | (this.tntHi << (32 - sh)) : this.tntLo;
    return v & ((1 << k) - 1);
  }

  private walkTnt(): Step {
    const missing = this.resync.missingPacket;
    for (;;) {
      // a sink that wants no branch reports: whole runs of bits at once while no pause can fall among them
      if (this.patterns && this.tntCount && !this.mayHold()) {
        const k = Math.min(this.tntCount, PATTERN_BITS);
        const used = this.replayTnt(this.tntRun(k), k);
        if (used) {
          this.tntCount -= used;
          if (this.tntCount) continue;
          this.st = FlowState.InSync;
          // as the walk ends a TNT packet: Again only after a not-taken conditional branch
          return this.linkTaken || this.lastInsn!.op === 'ret' ? Step.Ok : Step.Again;
        }
      }
      const c = this.walkInsn(0n);
      if (c === WalkStop.Error) {
        this.tntCount = 0;
        return Step.Error;
      }
      if (c === WalkStop.Paused) return Step.Pause;
      const insn = this.lastInsn!;
      if (insn.op === 'ret') {
        const taken = this.tntCount > 0 && this.tntBit(this.tntCount - 1);
        if (!this.retCompression) return this.fail(PtErr.MISMAT, 'RET when expecting conditional branch', missing);
        if (!this.retAddr) return this.fail(PtErr.MISMAT, 'Bad RET compression (stack empty)', missing);
        if (!taken) return this.fail(PtErr.MISMAT, 'Bad RET compression (TNT=N)', missing);
        if (this.pauseAtState()) return Step.Pause;
        this.popTnt();
        // the state ends in TNT_CONT or IN_SYNC, where perf samples the time
        this.clock.refresh();
        this.commit();
        const from = this.ip;
        this.ip = this.retAddr;
        this.linkFrom = this.retBlock; // the return address is the call block's end
        this.linkTaken = false;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.ret, this.tsc);
        if (!this.tntCount) {
          this.st = FlowState.InSync;
          return this.switchPause ? Step.Pause : Step.Ok;
        }
        if (this.switchPause) return Step.Pause;
        continue;
      }
      if (c === WalkStop.Indirect) {
        // Indirect branch while TNT bits remain: a deferred TIP must follow.
        const t = this.next();
        if (t === PACKET_END) return Step.End;
        if (t === PACKET_BAD) return Step.Error;
        if (t !== PT.TIP || this.reader.raw.ipc === 0) {
          this.reader.unread();
          return this.fail(PtErr.MISMAT, 'Missing deferred TIP for indirect branch', missing);
        }
        // a state of the TNT packet's time once a bit of it was taken, else of the time before
        if (this.pauseAtState(this.clock.sample)) {
          this.reader.unread();
          return Step.Pause;
        }
        this.reader.applyIp();
        this.commit();
        const from = this.ip;
        this.ip = this.reader.last.ip;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.indirect, this.tsc, insn.op);
        if (this.switchPause) return Step.Pause;
        continue;
      }
      // conditional: a taken one is a state perf may yield after (a not-taken one is none)
      if (this.tntBit(this.tntCount - 1) && this.pauseAtState()) return Step.Pause;
      const taken = this.popTnt();
      if (taken) this.clock.refresh();
      else this.clock.refreshQuiet();
      if (this.commit(!taken)) {
        // an instruction sample at the not-taken branch, a state perf yields at: walk to it again on resume
        this.tntCount++;
        this.pending = undefined;
        return Step.Pause;
      }
      const from = this.ip;
      // the next walk starts from this block's link (block-links.ts); not taken: its end, no new bigint
      this.linkFrom = this.lastBlock;
      this.linkTaken = taken;
      if (taken) {
        this.ip = insn.target!;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.cond, this.tsc);
      } else {
        this.ip = this.lastBlock?.end ?? this.ip + BigInt(insn.length);
      }
      if (!this.tntCount) {
        this.st = FlowState.InSync;
        return taken ? Step.Ok : Step.Again;
      }
    }
  }

  private walkTip(): Step {
    const c = this.walkInsn(0n);
    if (c === WalkStop.Error) return Step.Error;
    if (c === WalkStop.Paused) return Step.Pause;
    if (c === WalkStop.Conditional)
      return this.fail(PtErr.MISMAT, 'Conditional branch when expecting indirect branch', FlowState.ErrResync);
    if (this.pauseAtState()) return Step.Pause;
    const pgd = this.st === FlowState.TipPgd;
    // the walk ends IN_SYNC: perf samples the time (the direct branches on the way had the one before)
    this.clock.refresh();
    const from = this.ip;
    const to = this.tipIpc ? this.reader.last.ip : 0n;
    const op = this.lastInsn?.op;
    const ks = this.kernelStart;
    if (!pgd && ks !== undefined && from >= ks && to !== 0n && to < ks) {
      // intel_pt_run_decoder: "Use estimated TSC upon return to user space": the queue's time becomes the
      // estimate, and perf yields before this state's samples (the branch and its instruction) once that
      // reaches the stop (not while setting the queue up)
      const est = this.estTsc();
      this.st = FlowState.InSync;
      this.ip = to;
      const insns = this.pending;
      this.pending = undefined;
      this.pendingUser = { from, to, op, est, insns };
      if (this.stopTsc !== NO_STOP && this.stopTsc > 1n && est >= this.stopTsc) return Step.Pause;
      this.flushUserReturn();
      return Step.Ok;
    }
    this.commit();
    this.st = FlowState.InSync;
    if (pgd) this.pge = false;
    if (this.tipIpc !== 0) this.ip = this.reader.last.ip;
    if (pgd) {
      this.sink.branch?.(this.cpu, from, to, BranchKind.traceEnd, this.tsc, op);
      this.sink.event?.(this.cpu, 'disabled', to, this.reader.lastOffset);
    } else {
      this.sink.branch?.(this.cpu, from, to, BranchKind.indirect, this.tsc, op);
    }
    return this.switchPause ? Step.Pause : Step.Ok;
  }

  /** Report the return to user space walkTip kept: its instruction (counted already), then the branch. */
  private flushUserReturn(): void {
    const p = this.pendingUser;
    if (!p) return;
    this.pendingUser = undefined;
    if (p.insns) {
      this.insnCount++;
      this.sink.insns?.(this.cpu, p.insns, p.insns.length - 1, p.insns.length, p.est);
    }
    this.sink.branch?.(this.cpu, p.from, p.to, BranchKind.indirect, p.est, p.op);
  }
}
