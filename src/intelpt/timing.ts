/**
 * Intel PT time tracking and calibration with libipt's semantics (pt_time.c:
 * `struct pt_time` and `struct pt_time_cal`), so tools built on it estimate
 * the same TSC at every timing packet as Intel's ptdump/ptxed.
 *
 * - TimeTracker follows TSC, TMA, MTC and CYC to an estimated TSC; CYC needs
 *   a fast-counter:cycles ratio (FCR) from the calibration.
 * - TimeCalibration estimates the FCR from the nominal frequency and CBR
 *   (`nomFreq`), or from the cycles counted between two MTCs (needs
 *   cpuid[0x15]) or two TSCs in PSB+.
 *
 * Arithmetic is C's: u64 values are bigints wrapped to 64 bits, u32 ones
 * numbers wrapped to 32 bits, and shift counts of 32 or more are taken mod 32
 * as x86's SHL does (libipt shifts by the user's mtc_freq unchecked).
 * Errors are libipt's error names (TimeError), never exceptions.
 */

export interface TimingConfig {
  /** IA32_RTIT_CTL.MTCFreq (ptdump --mtc-freq). */
  mtcFreq: number;
  /** MSR_PLATFORM_INFO[15:8], the nominal core:bus ratio (ptdump --nom-freq); 0 = unknown. */
  nomFreq: number;
  /** cpuid[0x15].eax / .ebx: the TSC:crystal clock ratio that turns CTC into TSC ticks. */
  cpuid15Eax: number;
  cpuid15Ebx: number;
  /** SKL168 (CYC packets may be dropped right before a PSB): enabled by --cpu for affected models. */
  skl168?: boolean;
}

/** libipt error codes these functions return (pt_errstr texts in LIBIPT_ERRSTR). */
export type TimeError = 'internal' | 'bad_packet' | 'bad_context' | 'bad_config' | 'no_time';

/** pt_errstr() texts of the libipt error codes perfpoke reports. */
export const LIBIPT_ERRSTR = {
  internal: 'internal error',
  invalid: 'invalid argument',
  bad_opc: 'unknown opcode',
  bad_packet: 'unknown packet',
  bad_context: 'unexpected packet context',
  eos: 'reached end of trace stream',
  bad_config: 'bad configuration',
  noip: 'no ip',
  ip_suppressed: 'ip has been suppressed',
  no_time: 'no timing information',
  bad_cpu: 'unknown cpu',
} as const;

/** libipt's pt_tcal_fcr_shr: the FCR is kept as a fixed-point value with 8 fraction bits. */
export const FCR_SHR = 8n;
const M64 = (1n << 64n) - 1n;
const u64 = (v: bigint): bigint => v & M64;
const u32 = (v: number): number => v >>> 0;
/** C `(uint32_t) a << n` on x86 (count mod 32). */
const shl32 = (a: number, n: number): number => (a << (n & 31)) >>> 0;
const MTC_BITS = 8;
const TMA_CTC_BITS = 16;
const TMA_CTC_MASK = 0xffff;

/** pt_time_ctc_delta: CTC distance with one wrap-around corrected. */
function ctcDelta(ctc: number, lastCtc: number, cfg: TimingConfig): number | TimeError {
  let c = ctc;
  if (c < lastCtc) {
    c = u32(c + shl32(1, cfg.mtcFreq + MTC_BITS));
    if (c < lastCtc) return 'bad_packet';
  }
  return u32(c - lastCtc);
}

/** pt_time_ctc_fc: CTC ticks to fast-counter (TSC) ticks. */
function ctcFc(ctc: number, cfg: TimingConfig): bigint | TimeError {
  if (!cfg.cpuid15Eax || !cfg.cpuid15Ebx) return 'bad_config';
  return u64(BigInt(ctc) * BigInt(cfg.cpuid15Ebx)) / BigInt(cfg.cpuid15Eax);
}

/** libipt `struct pt_time`. */
export class TimeTracker {
  tsc = 0n;
  base = 0n;
  fc = 0n;
  ctc = 0;
  ctcCyc = 0;
  lostMtc = 0;
  lostCyc = 0;
  cbr = 0;
  haveTsc = false;
  haveCbr = false;
  haveTma = false;
  haveMtc = false;

  /** pt_time_query_tsc: the estimate, and 'no_time' before the first TSC (the value is still given). */
  queryTsc(): { tsc: bigint; error?: 'no_time' } {
    return this.haveTsc ? { tsc: this.tsc } : { tsc: this.tsc, error: 'no_time' };
  }

  updateTsc(tsc: bigint): TimeError | undefined {
    this.haveTsc = true;
    this.haveTma = false;
    this.haveMtc = false;
    this.tsc = this.base = tsc;
    this.ctc = 0;
    this.fc = 0n;
    this.lostMtc = 0;
    this.lostCyc = 0;
    return undefined;
  }

  updateCbr(ratio: number): TimeError | undefined {
    if (!ratio) return 'bad_packet';
    this.haveCbr = true;
    this.cbr = ratio;
    return undefined;
  }

  updateTma(ctc: number, fc: number, cfg: TimingConfig): TimeError | undefined {
    if (!this.haveTsc) return 'bad_context';
    if (this.haveTma) return 'bad_context';
    if (this.haveMtc) return 'internal';
    const mtcHi = u32(cfg.mtcFreq + MTC_BITS);
    const ctcMask = u32(shl32(1, mtcHi) - 1);
    this.haveTma = true;
    this.base = u64(this.base - BigInt(fc));
    this.fc = u64(this.fc + BigInt(fc));
    if (mtcHi <= TMA_CTC_BITS) this.haveMtc = true;
    this.ctc = this.ctcCyc = u32(ctc & ctcMask);
    return undefined;
  }

  updateMtc(payload: number, cfg: TimingConfig): TimeError | undefined {
    const { haveTsc, haveTma, haveMtc } = this;
    if (haveTsc && !haveTma) return undefined;
    let base = this.base;
    let lastCtc = this.ctc;
    const ctc = shl32(payload, cfg.mtcFreq);
    if (this.fc || this.lostCyc || !haveMtc) this.ctcCyc = ctc;
    this.haveMtc = true;
    this.fc = 0n;
    this.ctc = ctc;
    this.lostCyc = 0;
    if (!haveMtc) {
      if (!haveTma) return undefined;
      if (lastCtc & ~TMA_CTC_MASK) return 'internal';
      const ctcLo = ctc & TMA_CTC_MASK;
      let ctcHi = u32(ctc & ~TMA_CTC_MASK);
      if (ctcLo < lastCtc) {
        ctcHi = u32(ctcHi - (1 << TMA_CTC_BITS));
        ctcHi = u32(ctcHi & shl32(0xff, cfg.mtcFreq));
      }
      lastCtc = u32(lastCtc | ctcHi);
    }
    const delta = ctcDelta(ctc, lastCtc, cfg);
    if (typeof delta === 'string') {
      this.lostMtc += 1;
      return delta;
    }
    const tsc = ctcFc(delta, cfg);
    if (typeof tsc === 'string') return tsc;
    base = u64(base + tsc);
    this.tsc = this.base = base;
    return undefined;
  }

  /** pt_time_adjust_cyc: the share of a CYC spanning several MTC periods that falls in the current one. */
  private adjustCyc(cyc: bigint, cfg: TimingConfig, fcr: bigint): bigint | TimeError {
    const lastCtc = this.ctcCyc;
    const ctc = this.ctc;
    if (ctc === lastCtc) return cyc;
    const delta = ctcDelta(ctc, lastCtc, cfg);
    if (typeof delta === 'string') return delta;
    const fc = ctcFc(delta, cfg);
    if (typeof fc === 'string') return fc;
    const oldCyc = u64(fc << FCR_SHR) / fcr;
    const total = cyc < oldCyc ? oldCyc : cyc;
    return total - oldCyc;
  }

  updateCyc(value: bigint, cfg: TimingConfig, fcr: bigint): TimeError | undefined {
    if (!fcr) {
      this.lostCyc += 1;
      return undefined;
    }
    let cyc = value;
    let fc = this.fc;
    if (!fc) {
      const adj = this.adjustCyc(cyc, cfg, fcr);
      if (typeof adj === 'string') return adj;
      cyc = adj;
    }
    fc = u64(fc + (u64(cyc * fcr) >> FCR_SHR));
    this.fc = fc;
    this.tsc = u64(this.base + fc);
    return undefined;
  }
}

/** libipt `struct pt_time_cal`. */
export class TimeCalibration {
  tsc = 0n;
  cycTsc = 0n;
  cycMtc = 0n;
  fcr = 0n;
  minFcr = M64;
  maxFcr = 0n;
  ctc = 0;
  lostMtc = 0;
  haveMtc = false;
  checkSkl168 = false;

  /** pt_tcal_init. */
  reset(): void {
    this.tsc = this.cycTsc = this.cycMtc = this.fcr = this.maxFcr = 0n;
    this.minFcr = M64;
    this.ctc = this.lostMtc = 0;
    this.haveMtc = this.checkSkl168 = false;
  }

  get haveFcr(): boolean {
    return this.minFcr <= this.maxFcr;
  }

  /** pt_tcal_fcr: the current FCR, or 'no_time' before any calibration. */
  queryFcr(): bigint | 'no_time' {
    return this.haveFcr ? this.fcr : 'no_time';
  }

  setFcr(fcr: bigint): undefined {
    this.fcr = fcr;
    if (fcr < this.minFcr) this.minFcr = fcr;
    if (fcr > this.maxFcr) this.maxFcr = fcr;
    return undefined;
  }

  updatePsb(cfg: TimingConfig): undefined {
    if (cfg.skl168) this.checkSkl168 = true;
    return undefined;
  }

  /** A TSC outside PSB+: remembered for the next in-header TSC, not used for calibration. */
  updateTsc(tsc: bigint): undefined {
    this.tsc = tsc;
    this.cycTsc = 0n;
    return undefined;
  }

  headerTsc(packetTsc: bigint): TimeError | undefined {
    const lastTsc = this.tsc;
    const cyc = this.cycTsc;
    let tsc = packetTsc;
    this.tsc = tsc;
    this.cycTsc = 0n;
    if (!lastTsc || !cyc) return undefined;
    if (this.haveMtc) return undefined;
    if (tsc < lastTsc) {
      tsc = u64(tsc + (1n << 56n));
      if (tsc < lastTsc) return 'bad_packet';
    }
    const delta = tsc - lastTsc;
    if (delta & ~(M64 >> FCR_SHR) & M64) return 'internal';
    return this.setFcr((delta << FCR_SHR) / cyc);
  }

  /** A CBR outside PSB+ is a frequency change: calibration starts over. */
  updateCbr(ratio: number, cfg: TimingConfig): TimeError | undefined {
    this.reset();
    return this.headerCbr(ratio, cfg);
  }

  headerCbr(ratio: number, cfg: TimingConfig): TimeError | undefined {
    const p1 = BigInt(cfg.nomFreq);
    if (!p1) return undefined;
    if (!ratio) return 'bad_packet';
    return this.setFcr((p1 << FCR_SHR) / BigInt(ratio));
  }

  updateMtc(payload: number, cfg: TimingConfig): TimeError | undefined {
    const lastCtc = this.ctc;
    const haveMtc = this.haveMtc;
    const cyc = this.cycMtc;
    const checkSkl168 = this.checkSkl168;
    this.checkSkl168 = false;
    const ctc = shl32(payload, cfg.mtcFreq);
    if (!haveMtc) {
      this.cycMtc = 0n;
      this.ctc = ctc;
      this.haveMtc = true;
      return undefined;
    }
    if (!cyc) return undefined;
    this.haveMtc = true;
    this.cycMtc = 0n;
    this.ctc = ctc;
    this.lostMtc += 1;
    const delta = ctcDelta(ctc, lastCtc, cfg);
    if (typeof delta === 'string') return delta;
    const fc = ctcFc(delta, cfg);
    if (typeof fc === 'string') return fc;
    if (fc & ~(M64 >> FCR_SHR) & M64) return 'internal';
    const fcr = (fc << FCR_SHR) / cyc;
    if (checkSkl168) {
      // SKL168: skip an MTC period that lost MTCs, or (high MTC frequencies) a wrap CYC
      if (shl32(1, cfg.mtcFreq) < delta) return undefined;
      if (cfg.mtcFreq < 10 && this.haveFcr) {
        const dfc = u64(this.fcr * (cyc + 0xf00n)) >> FCR_SHR;
        if (dfc < fc) return undefined;
      }
    }
    this.setFcr(fcr);
    this.lostMtc = 0;
    return undefined;
  }

  updateCyc(value: bigint): undefined {
    this.cycMtc = u64(this.cycMtc + value);
    this.cycTsc = u64(this.cycTsc + value);
    return undefined;
  }

  /** pt_tcal_update_ovf (ptdump --keep-tcal-on-ovf): keep the FCR, forget the interrupted periods. */
  updateOvf(): undefined {
    this.tsc = this.cycTsc = this.cycMtc = 0n;
    this.ctc = 0;
    this.haveMtc = false;
    return undefined;
  }
}
