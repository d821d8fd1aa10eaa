/**
 * The packet side of the flow decoder below its IN_SYNC walks: reading
 * packets (a bad one is reported here), the pause check before timing points,
 * and the states that look for a place to start decoding: NO_PSB (sync, then
 * PSB+), NO_IP and ERR_RESYNC (syncIp: the next packet that gives an IP).
 * CpuFlow (cpu-flow.ts) extends it with the run loop and the IN_SYNC walks.
 */
import { PT } from '../packets/kinds.js';
import { FlowWalker } from './code-walk.js';
import { PtErr } from './flow-errors.js';
import { BranchKind, FlowState, Step, type PowerEvent } from './flow-types.js';
import { PACKET_BAD, PACKET_END } from './packet-reader.js';

/** run()'s stop TSC when there is none. */
export const NO_STOP = 1n << 62n;

export class FlowSync extends FlowWalker {
  /** TNT outcomes left in the TNT packet being walked. */
  protected tntCount = 0;
  protected stopTsc = NO_STOP;
  /** MODE.Exec seen since the last enable (libipt reports it after [enabled]). */
  protected execMode64: boolean | undefined;
  /** The last PSB+ read held a FUP giving an IP. */
  protected psbFup = false;
  /** perf's decoder cbr_seen, the state's cbr, and the queue's cbr_seen (-1: perf's UINT_MAX). */
  private cbrSeen = 0;
  private stateCbr = 0;
  private queueCbrSeen = -1;
  /** The last PSB+ read: its offset in the CPU's trace and its FUP's IP (perf's psb_ip; 0 without one). */
  protected psbOffset = 0;
  protected psbIp = 0n;
  /** The last PSB+ read held a TSC packet. */
  protected psbHadTsc = false;

  // ---- power events (itrace p) -------------------------------------------

  /** A CBR packet was read (perf's intel_pt_calc_cbr): the ratio is its payload's low byte. */
  protected readCbr(): void {
    this.clock.setCbr(this.reader.raw.lo & 0xff);
  }

  /** The type of the packet read before the last one (perf's last_packet_type; -1 before any). */
  protected lastType = -1;
  private thisType = -1;

  /**
   * An MTC, TMA or CYC packet just read (`cyc` false: perf ignores CYC in a PSB+ read in sync). The clock
   * moves on; an error's estimated time stands until the clock passes it.
   */
  protected timingPacket(t: number, cyc = true): void {
    const r = this.reader.raw;
    if (t === PT.MTC) this.clock.mtc(r.lo, this.lastType, (cb) => this.reader.lookahead(cb));
    else if (t === PT.TMA) this.clock.tma(r.lo, r.count);
    else if (cyc) this.clock.cyc((BigInt(r.hi >>> 0) << 32n) | BigInt(r.lo >>> 0));
    if (this.errTsc !== undefined && this.clock.timestamp > this.errTsc) this.errTsc = undefined;
  }

  /**
   * The time the flow is paused before: a TSC packet's (or a PSB+ holding one) when one is next, else the
   * clock's when an MTC or CYC moved it to the stop time with no state reported at that time yet.
   */
  protected timeAhead(): bigint | undefined {
    // paused at a state: the packet after it is no concern of this pause
    if (this.heldTsc !== undefined) return this.heldTsc;
    const t = this.reader.timingTscAhead();
    if (t !== undefined) return t;
    return this.crossed() ? this.clock.timestamp : undefined;
  }

  /**
   * An MTC or CYC moved the clock to the stop time and no state was reported at it yet: perf yields after
   * the next state it samples the time in (it reports that state first when it resumes).
   */
  /** The time of the decoder state run() paused at, its time at or past the stop (perf yields after it). */
  protected heldTsc: bigint | undefined;

  protected override holdState(tsc: bigint): boolean {
    if (this.stopTsc === NO_STOP || tsc < this.stopTsc || this.clock.reported >= this.stopTsc) return false;
    this.heldTsc = tsc;
    return true;
  }

  /** Might a state of the clock's time, before a timing packet moves it, be one perf yields after (holdState)? */
  protected mayHold(): boolean {
    const c = this.clock;
    const stop = this.stopTsc;
    return stop !== NO_STOP && c.reported < stop && (c.timestamp >= stop || c.sample >= stop);
  }

  protected crossed(): boolean {
    const c = this.clock;
    return this.stopTsc !== NO_STOP && c.timestamp >= this.stopTsc && c.reported < this.stopTsc;
  }

  /** A CBR read in IN_SYNC that changed the ratio is a decoder state of its own (perf: state.type 0). */
  protected get cbrChanged(): boolean {
    return this.cbr !== this.cbrSeen;
  }

  /**
   * A decoder state ended without error (from_ip `fromIp`): intel_pt_decode marks a changed ratio
   * (CBR_CHG), and intel-pt.c synthesizes a cbr sample when the state's ratio differs from the queue's
   * (always at the queue's first state).
   */
  protected stateDone(fromIp: bigint, toIp = 0n): void {
    this.clock.refresh();
    const power = this.sink.power;
    if (!power) return;
    if (this.cbr !== this.cbrSeen) {
      this.cbrSeen = this.cbr;
      this.stateCbr = this.cbr;
    }
    if (this.stateCbr === this.queueCbrSeen) return;
    this.queueCbrSeen = this.stateCbr;
    const e: PowerEvent = { kind: 'cbr', ip: fromIp, tsc: this.tsc, cbr: this.stateCbr, op: this.walkOp };
    if (toIp) e.to = toIp;
    power.call(this.sink, this.cpu, e);
  }

  /** A decoder state's report that waits for run() to resume (perf yielded after decoding the state). */
  protected heldReport: (() => void) | undefined;

  /**
   * A state the resync scan ended in: perf's queue time becomes the later of its time and an error's
   * estimate; when that reaches the stop perf yields before its samples (reported on resume), else report now.
   */
  protected reportState(report: () => void): Step {
    const e = this.errTsc;
    const ts = this.clock.timestamp;
    if (!this.quickSync && this.holdState(e !== undefined && e > ts ? e : ts)) {
      this.heldReport = report;
      return Step.Pause;
    }
    report();
    return Step.Ok;
  }

  /** A PSB+ was read: perf's PSB_EVT state (from_ip `ip`), timed by the PSB+'s TSC. */
  protected psbDone(ip: bigint, toIp = 0n): void {
    this.clock.refresh();
    const power = this.sink.power;
    if (!power) return;
    const e: PowerEvent = { kind: 'psb', ip, tsc: this.tsc, offset: this.psbOffset, op: this.walkOp };
    if (toIp) e.to = toIp;
    power.call(this.sink, this.cpu, e);
    this.stateDone(ip, toIp);
  }

  // ---- packets ---------------------------------------------------------

  /** The next packet (PAD skipped); a bad one is reported here and the reader moved to the next PSB. */
  protected next(): number {
    const rd = this.reader;
    const c = rd.cursor;
    // The common case inline, for speed: the window holds the packet and it is no PAD. Otherwise (a PAD,
    // a refill due, a bad or cut-off packet, which leave the cursor where it was) the reader goes on.
    if (rd.packetAhead(c)) {
      const n = c.next();
      if (n > 0 && c.raw.type !== PT.PAD) {
        this.lastType = this.thisType;
        this.thisType = c.raw.type;
        return c.raw.type;
      }
    }
    const t = rd.next();
    if (t >= 0) {
      this.lastType = this.thisType;
      this.thisType = t;
    }
    if (t === PACKET_BAD) {
      this.clock.dropTma();
      this.fail(PtErr.BADPKT, this.reader.badReason, FlowState.NoPsb);
      this.reader.syncToPsb(false);
    }
    return t;
  }

  /** Would the packet at the cursor move time to ≥ stopTsc? (checked where run() can pause and resume) */
  protected atStop(): boolean {
    if (this.stopTsc === NO_STOP) return false;
    // after an error perf's queue time is the error's estimate: it stops at the next state once that is due
    if (this.errTsc !== undefined && this.errTsc >= this.stopTsc) return true;
    // the common case: the next packet is neither a TSC nor a PSB (its first byte says), so no timing point
    const x = this.reader.nextLead();
    if (x !== 0x19 && x !== 0x02 && x !== -1)
      return this.crossed() && !(this.st === FlowState.InSync && this.reader.nextIsQuiet());
    // a PSB+ with a FUP while tracing: perf walks to the FUP's IP first (its states may yield), then yields
    // after the PSB+ (psbInSync pauses there)
    if (
      !this.quickSync &&
      this.st === FlowState.InSync &&
      this.pge &&
      this.reader.nextIsPsb() &&
      this.reader.psbFupIp() !== undefined
    )
      return false;
    const t = this.reader.timingTscAhead();
    if (t !== undefined && t >= this.stopTsc) return true;
    // past the stop by MTC or CYC: a packet that is a state of its own is that state (a walk pauses itself)
    return this.crossed() && !(this.st === FlowState.InSync && this.reader.nextIsQuiet());
  }

  protected setTsc(): void {
    this.clock.tsc(this.reader.tscValue(), this.lastType);
    if (this.errTsc !== undefined && this.clock.timestamp > this.errTsc) this.errTsc = undefined;
  }

  protected setIp(): void {
    this.reader.applyIp();
    this.ip = this.reader.last.ip;
  }

  protected modeExec(): void {
    this.execMode64 = (this.reader.raw.lo & 1) === 1;
  }

  protected enabled(): void {
    if (!this.sink.event) return;
    const at = this.reader.lastOffset;
    this.sink.event(this.cpu, 'enabled', this.ip, at);
    if (this.execMode64) this.sink.event(this.cpu, 'exec-mode-64', this.ip, at);
    this.execMode64 = undefined;
  }

  protected traceBegin(): void {
    this.clock.refresh();
    this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
  }

  /**
   * PWRE, PWRX or EXSTOP read in sync: a decoder state of its own (from_ip the decoder's IP). A PWRE not
   * after an MWAIT gives perf's sample the state's pwre_payload, which only an MWAIT+PWRE pair sets
   * (intel_pt_walk_trace stores the packet's payload in pwrx_payload): 0, as perf 6.1 prints it.
   */
  protected powerState(type: number, payload: number): void {
    this.clock.refresh();
    const ip = this.ip;
    const tsc = this.tsc;
    // intel_pt_sample: a changed ratio's cbr sample comes before the power event's
    this.stateDone(ip);
    // intel_pt_sample: a changed ratio's cbr sample comes before the power event's
    this.stateDone(ip);
    const power = this.sink.power;
    if (power) {
      let e: PowerEvent;
      if (type === PT.PWRE) e = { kind: 'pwre', ip, tsc, hw: false, cstate: 0, subcstate: 0 };
      else if (type === PT.EXSTOP) e = { kind: 'exstop', ip, tsc, ipBit: false };
      else {
        const wake = (payload >>> 8) & 0xf;
        e = { kind: 'pwrx', ip, tsc, deepest: payload & 0xf, last: (payload >>> 4) & 0xf, wake };
      }
      e.op = this.walkOp;
      power.call(this.sink, this.cpu, e);
    }
  }

  /**
   * A walk reached the branch whose state samples a time an MTC or CYC moved past the stop: perf yields after
   * that state, so pause before reporting it; the branch is walked again on resume (undone here).
   */
  protected pauseAtState(tsc = this.clock.timestamp): boolean {
    if (!this.holdState(tsc)) return false;
    const op = this.lastInsn?.op;
    if (op === 'ret') {
      if (this.retBlock) this.stack.push(this.retBlock);
    } else if (op === 'call') this.stack.pop();
    this.pending = undefined;
    this.clock.count(-1);
    return true;
  }

  // ---- sync --------------------------------------------------------------

  /**
   * NO_PSB: forget the IP state and find a PSB (pausing before it when it is
   * a timing point at or after the stop TSC); read its PSB+; in sync if that
   * gave an IP (a FUP), else NO_IP.
   */
  protected sync(): Step {
    const rd = this.reader;
    this.pge = false;
    rd.last.reset();
    this.ip = 0n;
    this.stack.length = 0;
    this.tntCount = 0;
    if (!rd.syncToPsb(true)) return Step.End;
    if (this.atStop()) return Step.Pause;
    rd.last.haveIp = true;
    // perf 6.1 keeps the PSB's last IP (0, valid) while it looks for an IP after a PSB+ without FUP: a
    // TIP.PGE compressed against it gives an IP (measured: tracing that starts in user space)
    this.st = FlowState.ErrResync;
    const r = this.walkPsb();
    if (r !== Step.Ok) return r;
    this.clock.refresh();
    if (this.ip) {
      this.st = FlowState.InSync;
      // perf's hop mode resamples there: the PSB+'s FUP as an instruction sample
      if (this.quickSync) this.sink.quick?.(this.cpu, this.ip, this.tsc);
    } else if (this.quickSync >= 2)
      this.st = FlowState.NoPsb; // leap mode: on to the next PSB+ until one has an IP
    else this.afterSync = true;
    this.psbDone(this.psbIp);
    return Step.Ok;
  }

  /**
   * Read PSB+ (the reader on its PSB) up to and including PSBEND; the last IP
   * is 0 there and the return stack is cleared.
   */
  protected walkPsb(inSync = false): Step {
    const rd = this.reader;
    const t = this.next();
    // not a PSB: the end, or a bad packet next() reported (its resync state stands)
    if (t !== PT.PSB) return t === PACKET_END ? Step.End : Step.Ok;
    this.sink.event?.(this.cpu, 'psb', 0n, rd.lastOffset);
    this.psbFup = false;
    this.psbOffset = rd.lastOffset;
    this.psbIp = 0n;
    this.psbHadTsc = false;
    rd.last.ip = 0n;
    rd.last.haveIp = true;
    this.stack.length = 0;
    for (;;) {
      switch (this.next()) {
        case PACKET_END:
          return Step.End;
        case PACKET_BAD:
          return Step.Error;
        case PT.PSBEND:
          return Step.Ok;
        case PT.TSC:
          this.setTsc();
          this.psbHadTsc = true;
          break;
        case PT.MODE_EXEC:
          this.modeExec();
          break;
        case PT.FUP:
          if (rd.haveIp()) {
            this.setIp();
            this.psbIp = this.ip;
            this.pge = true;
            this.psbFup = true;
          }
          break;
        case PT.CBR:
          this.readCbr();
          break;
        case PT.MTC:
        case PT.TMA:
        case PT.CYC:
          this.timingPacket(this.reader.raw.type, !inSync);
          break;
        case PT.OVF:
          return this.overflow();
        default:
          break;
      }
    }
  }

  /**
   * NO_IP / ERR_RESYNC (perf's intel_pt_sync_ip, intel_pt_walk_to_ip): read
   * packets until one gives an IP, then go in sync there (a PSB+ counts only
   * when it gives one, and then reports no trace begin).
   */
  protected syncIp(): Step {
    const r = this.walkToIp();
    // perf's hop mode resamples where it got in sync: that IP as an instruction sample
    if (r === Step.Ok && this.quickSync && this.st === FlowState.InSync) this.sink.quick?.(this.cpu, this.ip, this.tsc);
    return r;
  }

  private walkToIp(): Step {
    const rd = this.reader;
    for (;;) {
      // perf yields at the state this scan ends in (queue time: the later of it and an error's estimate), not
      // before the packets that time it; hop mode yields at any packet
      if (this.quickSync && this.atStop()) return Step.Pause;
      switch (this.next()) {
        case PACKET_END:
          return Step.End;
        case PACKET_BAD:
          return Step.Error;
        case PT.TIP_PGD: {
          this.pge = false;
          if (rd.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = FlowState.InSync;
          this.afterSync = false;
          const at = rd.lastOffset;
          return this.reportState(() => {
            this.stateDone(0n, this.ip);
            this.sink.event?.(this.cpu, 'disabled', this.ip, at);
            this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceEnd, this.tsc);
          });
        }
        case PT.TIP_PGE:
          this.pge = true;
          if (rd.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = FlowState.InSync;
          this.afterSync = false;
          return this.reportState(() => {
            this.stateDone(0n, this.ip);
            this.enabled();
            this.traceBegin();
          });
        case PT.TIP:
          this.pge = true;
          if (rd.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = FlowState.InSync;
          this.afterSync = false;
          return this.reportState(() => {
            this.stateDone(0n, this.ip);
            this.traceBegin();
          });
        case PT.FUP:
          if (rd.haveIp()) this.setIp();
          if (this.ip) {
            this.st = FlowState.InSync;
            this.afterSync = false;
            return this.reportState(() => {
              this.stateDone(0n, this.ip);
              this.traceBegin();
            });
          }
          break;
        case PT.PSB: {
          rd.unread();
          const r = this.walkPsb();
          if (r !== Step.Ok) return r;
          // a PSB_EVT state either way; intel_pt_sync_ip gives it from_ip 0 when the PSB+ gave an IP
          const ip = this.ip;
          if (ip) {
            // intel_pt_walk_to_ip: in sync at a PSB+ "do not have a sample" (no trace begin)
            this.st = FlowState.InSync;
            this.afterSync = false;
          }
          const h = this.reportState(() => this.psbDone(0n, ip));
          if (h !== Step.Ok || ip) return h;
          break;
        }
        case PT.TSC:
          this.setTsc();
          break;
        case PT.MTC:
        case PT.TMA:
        case PT.CYC:
          this.timingPacket(rd.raw.type);
          break;
        case PT.CBR:
          this.readCbr();
          // after a FUP-less first PSB+ perf reads it as in sync: a changed ratio is a state of its own
          if (this.afterSync && this.cbrChanged) {
            this.stateDone(this.ip);
            return Step.Ok;
          }
          break;
        case PT.PWRE:
        case PT.PWRX:
        case PT.EXSTOP:
          if (this.afterSync && !(rd.raw.type === PT.EXSTOP && rd.raw.flag)) {
            this.powerState(rd.raw.type, rd.raw.lo);
            return Step.Ok;
          }
          break;
        case PT.MODE_EXEC:
          this.modeExec();
          break;
        case PT.OVF:
          return this.overflow();
        default:
          break;
      }
    }
  }

  protected overflow(): Step {
    this.clock.overflow();
    this.sink.event?.(this.cpu, 'overflow', 0n, this.reader.lastOffset);
    this.pge = false;
    this.tntCount = 0;
    return this.fail(PtErr.OVR, 'overflow packet', FlowState.ErrResync);
  }
}
