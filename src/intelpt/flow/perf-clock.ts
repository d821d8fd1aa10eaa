/**
 * The flow decoder's clock, after perf 6.1's intel-pt-decoder.c: the timestamp
 * TSC, TMA, MTC and CYC packets give (intel_pt_calc_tsc_timestamp,
 * intel_pt_calc_tma, intel_pt_calc_mtc_timestamp, intel_pt_calc_cyc_timestamp,
 * with the cycles-to-TSC ratio from CBR or calibrated between two MTCs by
 * intel_pt_calc_cyc_to_tsc), the instructions walked since it
 * (timestamp_insn_cnt), and the time perf gives a decoder state: its
 * sample_timestamp, refreshed only when a state ends in a state perf samples
 * the time in (intel_pt_sample_time), and the estimate from it
 * (intel_pt_est_timestamp, scaled by max non-turbo ratio / CBR).
 *
 * One object owns all of it: the walker counts instructions into it, the
 * packet side feeds it packets, and every time the flow reports is asked of it.
 */
import { PT } from '../packets/kinds.js';
import type { RawPacket } from '../packets/raw-decode.js';

export interface PerfClockConfig {
  /** The config's mtc_period (perf's mtc_shift: an MTC each 2^mtcShift CTC ticks). */
  mtcShift: number;
  /** AUXTRACE_INFO's tsc_ctc_ratio_n / _d (TSC ticks per CTC tick; d 0: no MTC timing). */
  tscCtcN: number;
  tscCtcD: number;
  /** perf's max_non_turbo_ratio (0: unknown). */
  maxNonTurboRatio: number;
}

/** Packets after the current one, PADs skipped, until the callback returns true (perf's intel_pt_pkt_lookahead). */
export type Lookahead = (cb: (p: RawPacket) => boolean) => void;

/** A TSC packet may slip past MTCs: perf keeps the later time when the TSC is behind it by less than this. */
const TSC_SLIP = 0x10000n;
const BIT56 = 1n << 56n;
const HI_BYTE = 0xffn << 56n;

/** perf's multdiv: t * n / d without overflow (0 when d is 0). */
function multdiv(t: bigint, n: number, d: number): bigint {
  if (!d) return 0n;
  const D = BigInt(d);
  const N = BigInt(n);
  return (t / D) * N + ((t % D) * N) / D;
}

/** C's `u64 += double` (the double sum truncated back to an integer). */
function addDouble(t: bigint, x: number): bigint {
  return BigInt(Math.trunc(Number(t) + x));
}

export class PerfClock {
  /** perf's decoder->timestamp (0 before any TSC) and tsc_timestamp (the last TSC packet's). */
  timestamp = 0n;
  private tscTimestamp = 0n;

  /** The last TSC packet's time (perf's tsc_timestamp: not raised where a backwards TSC was suppressed). */
  get lastTsc(): bigint {
    return this.tscTimestamp;
  }
  /** Instructions walked since the timestamp was last set (timestamp_insn_cnt). */
  insnCnt = 0;
  /** perf's sample_timestamp / sample_insn_cnt: the time of the decoder state last reported. */
  sample = 0n;
  private sampleInsn = 0;
  /** The last CBR packet's ratio (0 before any). */
  cbr = 0;
  private cbrCycToTsc = 0;
  // MTC timing (intel_pt_calc_tma / intel_pt_calc_mtc_timestamp)
  private haveTma = false;
  private fixupLastMtc = false;
  private lastMtc = 0;
  private ctcTimestamp = 0n;
  private ctcDelta = 0n;
  private readonly ctcRemMask: number;
  private readonly tscCtcMult: number;
  private readonly tscCtcD: number;
  // CYC timing
  private cycleCnt = 0n;
  private cycRefTimestamp = 0n;
  private haveCalcCycToTsc = false;
  private calcCycToTsc = 0;

  constructor(private readonly cfg: PerfClockConfig) {
    this.ctcRemMask = (1 << cfg.mtcShift) - 1;
    this.tscCtcD = cfg.tscCtcN ? cfg.tscCtcD : 0;
    this.tscCtcMult = this.tscCtcD && cfg.tscCtcN % this.tscCtcD === 0 ? cfg.tscCtcN / this.tscCtcD : 0;
  }

  /** Instructions walked (negative: one counted at a walk's stop is counted again when reported). */
  count(n: number): void {
    this.insnCnt += n;
    this.sampleInsn += n;
  }

  /**
   * The time of the last state reported (intel-pt.c's queue timestamp, which perf yields on): a state whose
   * time passes the next queue's comes after that queue's output.
   */
  reported = 0n;

  /** intel_pt_update_sample_time: the state just decoded ends where perf samples the time, and is reported. */
  refresh(): void {
    this.refreshQuiet();
    if (this.sample > this.reported) this.reported = this.sample;
  }

  /** intel_pt_update_sample_time with no state reported (a not-taken branch ending a TNT packet). */
  refreshQuiet(): void {
    this.sample = this.timestamp;
    this.sampleInsn = this.insnCnt;
  }

  /** intel_pt_est_timestamp: 2 ticks per instruction since the sample time, scaled by max non-turbo / CBR. */
  estimate(): bigint {
    let est = BigInt(this.sampleInsn) << 1n;
    const mnt = this.cfg.maxNonTurboRatio;
    if (this.cbr && mnt) est = (est * BigInt(mnt)) / BigInt(this.cbr);
    return this.sample + est;
  }

  /** An overflow: the instruction count restarts (intel_pt_overflow). */
  overflow(): void {
    this.insnCnt = 0;
  }

  /** A bad packet, or one PSB+ must not hold: the TMA no longer applies. */
  dropTma(): void {
    this.haveTma = false;
  }

  /** intel_pt_calc_tsc_timestamp (`last`: the previous packet's type). */
  tsc(payload: bigint, last: number): void {
    this.haveTma = false;
    let t = payload | (this.timestamp & HI_BYTE);
    if (this.timestamp) {
      this.tscTimestamp = t;
      if (t < this.timestamp && this.timestamp - t < TSC_SLIP) t = this.timestamp;
      if (t < this.timestamp) {
        t += BIT56;
        this.tscTimestamp = t;
      }
    } else {
      // the first TSC of a buffer, against its reference (perf's intel_pt_8b_tsc of small values)
      t = payload;
      this.tscTimestamp = t;
    }
    this.timestamp = t;
    this.insnCnt = 0;
    if (last === PT.CYC) {
      // perf calibrates from MTCs only: a TSC after a CYC just restarts the cycle count
      this.cycRefTimestamp = this.timestamp;
      this.cycleCnt = 0n;
      this.haveCalcCycToTsc = false;
    }
  }

  /** intel_pt_calc_tma: the CTC at the last TSC gives the MTC timestamps' base. */
  tma(ctc: number, fc: number): void {
    if (!this.tscCtcD) return;
    const rem = ctc & this.ctcRemMask;
    this.lastMtc = (ctc >>> this.cfg.mtcShift) & 0xff;
    this.ctcTimestamp = this.tscTimestamp - BigInt(fc) - this.ctcTicks(BigInt(rem));
    this.ctcDelta = 0n;
    this.haveTma = true;
    this.fixupLastMtc = true;
  }

  private ctcTicks(ctc: bigint): bigint {
    return this.tscCtcMult ? ctc * BigInt(this.tscCtcMult) : multdiv(ctc, this.cfg.tscCtcN, this.tscCtcD);
  }

  /**
   * intel_pt_fixup_last_mtc: with mtc_shift > 8 the TMA's 16 CTC bits lack MTC bits; take them from the
   * first MTC, assuming it comes after.
   */
  private fixup(mtc: number, last: number): number {
    const first = 1 << (16 - this.cfg.mtcShift);
    let l = (last | (mtc & ~(first - 1))) >>> 0;
    if (l >= mtc) l = (l - first) & 0xff;
    return l;
  }

  /** The MTC timestamp of `mtc` after `last`, its delta added to `delta` (perf's ctc_delta). */
  private mtcTime(mtc: number, last: number, delta: bigint): [bigint, bigint] {
    const d = mtc > last ? mtc - last : mtc + 256 - last;
    const ctcDelta = delta + (BigInt(d) << BigInt(this.cfg.mtcShift));
    return [this.ctcTimestamp + this.ctcTicks(ctcDelta), ctcDelta];
  }

  /** intel_pt_calc_mtc_timestamp (`last`: the previous packet's type; `ahead` for the CYC calibration). */
  mtc(mtc: number, last: number, ahead: Lookahead): void {
    if (!this.haveTma) return;
    if (this.cfg.mtcShift > 8 && this.fixupLastMtc) {
      this.fixupLastMtc = false;
      this.lastMtc = this.fixup(mtc, this.lastMtc);
    }
    const [t, delta] = this.mtcTime(mtc, this.lastMtc, this.ctcDelta);
    this.ctcDelta = delta;
    // a timestamp behind the current one is suppressed
    if (t >= this.timestamp) this.timestamp = t;
    this.insnCnt = 0;
    this.lastMtc = mtc;
    if (last === PT.CYC) {
      this.cycRefTimestamp = this.timestamp;
      this.cycleCnt = 0n;
      this.haveCalcCycToTsc = false;
      this.calibrate(last, ahead);
    }
  }

  /** intel_pt_calc_cbr. */
  setCbr(ratio: number): void {
    if (this.cbr === ratio) return;
    this.cbr = ratio;
    this.cbrCycToTsc = this.cfg.maxNonTurboRatio / ratio;
    // CYCs after a standalone CBR count from it (perf's "Fix CYC timestamps after standalone CBR", in 6.1)
    this.cycRefTimestamp = this.timestamp;
    this.cycleCnt = 0n;
  }

  /** intel_pt_calc_cyc_timestamp. */
  cyc(cycles: bigint): void {
    this.cycleCnt += cycles;
    if (!this.cycRefTimestamp) return;
    let t: bigint;
    if (this.haveCalcCycToTsc) t = addDouble(this.cycRefTimestamp, Number(this.cycleCnt) * this.calcCycToTsc);
    else if (this.cbr) t = addDouble(this.cycRefTimestamp, Number(this.cycleCnt) * this.cbrCycToTsc);
    else return;
    if (t >= this.timestamp) this.timestamp = t;
    this.insnCnt = 0;
  }

  /**
   * intel_pt_calc_cyc_to_tsc from an MTC (intel_pt_calc_cyc_cb): the TSC ticks per cycle between this MTC and
   * the next one, counting the CYCs in between, unless a TSC, a CBR change or a packet that stops timing
   * comes first, or the ratio is over 1.25 times the CBR's.
   */
  private calibrate(lastType: number, ahead: Lookahead): void {
    let cycles = 0n;
    let cbr = 0;
    let cbrCycToTsc = 0;
    let lastMtc = this.lastMtc;
    let delta = this.ctcDelta;
    let fixup = this.fixupLastMtc;
    let ts = this.timestamp;
    let last = lastType;
    const mnt = this.cfg.maxNonTurboRatio;
    ahead((p) => {
      const prev = last;
      last = p.type;
      switch (p.type) {
        case PT.MTC: {
          if (!this.haveTma) return false;
          const mtc = p.lo;
          if (this.cfg.mtcShift > 8 && fixup) {
            fixup = false;
            lastMtc = this.fixup(mtc, lastMtc);
          }
          const [t, d] = this.mtcTime(mtc, lastMtc, delta);
          delta = d;
          lastMtc = mtc;
          if (t < ts) return true;
          if (prev !== PT.CYC) {
            ts = t;
            return false;
          }
          if (!cbr && this.cbr) {
            cbr = this.cbr;
            cbrCycToTsc = this.cbrCycToTsc;
          }
          if (!cycles) return true;
          const ratio = Number(t - this.timestamp) / Number(cycles);
          if (cbr && ratio > cbrCycToTsc && ratio / cbrCycToTsc > 1.25) return true;
          this.calcCycToTsc = ratio;
          this.haveCalcCycToTsc = true;
          return true;
        }
        case PT.CYC:
          cycles += (BigInt(p.hi >>> 0) << 32n) | BigInt(p.lo >>> 0);
          return false;
        case PT.CBR: {
          const r = p.lo & 0xff;
          if (cbr && cbr !== r) return true;
          cbr = r;
          cbrCycToTsc = mnt / r;
          return false;
        }
        case PT.TNT8:
        case PT.TNT64:
        case PT.TIP_PGE:
        case PT.TIP:
        case PT.FUP:
        case PT.PSB:
        case PT.PIP:
        case PT.MODE_EXEC:
        case PT.MODE_TSX:
        case PT.PSBEND:
        case PT.VMCS:
        case PT.MNT:
        case PT.PTW:
          return false;
        default:
          // a TSC or TMA (calibration is from MTCs only), or a packet that stops timing
          return true;
      }
    });
  }
}
