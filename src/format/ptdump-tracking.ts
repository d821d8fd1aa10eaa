/**
 * The tracking column of Intel's ptdump (libipt 2.3 ptdump.c: track_last_ip,
 * track_tsc/cbr/tma/mtc/cyc, print_time, print_tcal) and the diagnostics it
 * prints on the way, in its order. Time comes from src/intelpt/timing.ts
 * (libipt's pt_time/pt_tcal).
 */
import { LastIp } from '../intelpt/packets/last-ip.js';
import {
  FCR_SHR,
  LIBIPT_ERRSTR,
  TimeCalibration,
  TimeTracker,
  type TimeError,
  type TimingConfig,
} from '../intelpt/timing.js';

/** ptdump's option bits that tracking reads. */
export interface TrackOptions {
  /** --time or --tcal (ptdump's track_time). */
  trackTime: boolean;
  showTime: boolean;
  showTcal: boolean;
  timeDelta: boolean;
  noTcal: boolean;
  noWallClock: boolean;
  keepTcalOnOvf: boolean;
}

/** One output line's fields (ptdump's struct ptdump_buffer), filled while a packet is processed. */
export interface PtdumpBuffer {
  opcode: string;
  payload: string;
  trackId: string;
  trackPayload: string;
  skip: boolean;
  skipTime: boolean;
  skipTcal: boolean;
}

/** `[offset: what: libipt error text]` (ptdump's diag()). */
export function diag(offset: number, what: string, err?: keyof typeof LIBIPT_ERRSTR): string {
  return err ? `[${offset.toString(16)}: ${what}: ${LIBIPT_ERRSTR[err]}]` : `[${offset.toString(16)}: ${what}]`;
}

/** C's "%.3f" / "%+.3f" of a double: exact binary value, ties to even (glibc), unlike toFixed. */
export function cFixed3(x: number, plus = false): string {
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, a);
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let exp = expBits - 1075;
  if (expBits) mant |= 1n << 52n;
  else exp = -1074;
  // a = mant * 2^exp; q = round(a * 1000)
  let q: bigint;
  if (exp >= 0) q = (mant << BigInt(exp)) * 1000n;
  else {
    const den = 1n << BigInt(-exp);
    const num = mant * 1000n;
    q = num / den;
    const r2 = (num % den) * 2n;
    if (r2 > den || (r2 === den && q & 1n)) q += 1n;
  }
  const s = q.toString().padStart(4, '0');
  const body = `${s.slice(0, -3)}.${s.slice(-3)}`;
  return neg ? `-${body}` : plus ? `+${body}` : body;
}

/** C snprintf into a char[n]: at most n-1 characters survive. */
export const fit = (s: string, n: number): string => (s.length < n ? s : s.slice(0, n - 1));

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** ptdump's struct ptdump_tracking. */
export class PtdumpTracking {
  readonly lastIp = new LastIp();
  readonly tcal = new TimeCalibration();
  time = new TimeTracker();
  /** The last printed TSC and FCR (for --time-delta). */
  tsc = 0n;
  fcr = 0n;
  inHeader = false;

  constructor(
    readonly opts: TrackOptions,
    readonly cfg: TimingConfig,
    /** Where diagnostics go, in order (before the packet's own line). */
    readonly out: string[],
  ) {}

  /** ptdump_tracking_reset (after a resync). */
  reset(): void {
    this.lastIp.reset();
    this.tcal.reset();
    this.time = new TimeTracker();
    this.tsc = this.fcr = 0n;
    this.inHeader = false;
  }

  private check(offset: number, what: string, err: TimeError | undefined): void {
    if (err) this.out.push(diag(offset, what, err));
  }

  trackLastIp(buf: PtdumpBuffer, offset: number, ipc: number, ip: bigint | undefined): void {
    buf.trackId = 'ip';
    this.lastIp.update(ipc, ip ?? 0n);
    const st = this.lastIp.status;
    if (st === 'ok') buf.trackPayload = hex16(this.lastIp.ip);
    else if (st === 'suppressed') buf.trackPayload = '<suppressed>';
    else {
      buf.trackPayload = '<unavailable>';
      this.out.push(diag(offset, 'error tracking last-ip', 'noip'));
    }
  }

  private printTime(buf: PtdumpBuffer, offset: number): void {
    buf.trackId = 'tsc';
    const { tsc, error } = this.time.queryTsc();
    if (error && !this.opts.noWallClock) {
      this.out.push(diag(offset, 'error printing time', error));
      buf.trackPayload = '<unavailable>';
      return;
    }
    if (this.opts.timeDelta) {
      const old = this.tsc;
      buf.trackPayload = fit(old <= tsc ? `+${(tsc - old).toString(16)}` : `-${(old - tsc).toString(16)}`, 17);
      this.tsc = tsc;
    } else buf.trackPayload = hex16(tsc);
  }

  private printTcal(buf: PtdumpBuffer, offset: number): void {
    buf.trackId = 'fcr';
    const fcr = this.tcal.queryFcr();
    if (fcr === 'no_time') {
      buf.trackPayload = '<unavailable>';
      this.out.push(diag(offset, 'error printing time', fcr));
      return;
    }
    // ptdump prints the fixed-point FCR as a double
    const scale = Number(1n << FCR_SHR);
    const d = Number(fcr) / scale;
    if (this.opts.timeDelta) {
      buf.trackPayload = fit(cFixed3(d - Number(this.fcr) / scale, true), 17);
      this.fcr = fcr;
    } else buf.trackPayload = fit(cFixed3(d), 17);
  }

  private trackTime(buf: PtdumpBuffer, offset: number): void {
    if (this.opts.showTcal && !buf.skipTcal) this.printTcal(buf, offset);
    if (this.opts.showTime && !buf.skipTime) this.printTime(buf, offset);
  }

  psb(): void {
    if (this.opts.trackTime) this.tcal.updatePsb(this.cfg);
    this.inHeader = true;
  }

  ovf(): void {
    if (!this.opts.trackTime) return;
    if (this.opts.keepTcalOnOvf) this.tcal.updateOvf();
    else this.tcal.reset();
  }

  tscPacket(buf: PtdumpBuffer, offset: number, tsc: bigint): void {
    if (!this.opts.noTcal)
      this.check(offset, 'error calibrating time', this.inHeader ? this.tcal.headerTsc(tsc) : this.tcal.updateTsc(tsc));
    this.check(offset, 'error updating time', this.time.updateTsc(tsc));
    this.trackTime(buf, offset);
  }

  cbrPacket(buf: PtdumpBuffer, offset: number, ratio: number): void {
    if (!this.opts.noTcal) {
      const err = this.inHeader ? this.tcal.headerCbr(ratio, this.cfg) : this.tcal.updateCbr(ratio, this.cfg);
      this.check(offset, 'error calibrating time', err);
    }
    this.check(offset, 'error updating time', this.time.updateCbr(ratio));
    buf.skipTime = true;
    this.trackTime(buf, offset);
  }

  tmaPacket(buf: PtdumpBuffer, offset: number, ctc: number, fc: number): void {
    this.check(offset, 'error updating time', this.time.updateTma(ctc, fc, this.cfg));
    buf.skipTcal = true;
    this.trackTime(buf, offset);
  }

  mtcPacket(buf: PtdumpBuffer, offset: number, ctc: number): void {
    if (!this.opts.noTcal) this.check(offset, 'error calibrating time', this.tcal.updateMtc(ctc, this.cfg));
    this.check(offset, 'error updating time', this.time.updateMtc(ctc, this.cfg));
    this.trackTime(buf, offset);
  }

  cycPacket(buf: PtdumpBuffer, offset: number, value: bigint): void {
    let fcr = 0n;
    if (!this.opts.noTcal) {
      const q = this.tcal.queryFcr();
      if (q === 'no_time') this.out.push(diag(offset, 'calibration error', q));
      else fcr = q;
      this.tcal.updateCyc(value);
    }
    const err = this.time.updateCyc(value, this.cfg, fcr);
    if (err) this.check(offset, 'error updating time', err);
    else if (!fcr) this.out.push(diag(offset, 'error updating time: no calibration'));
    buf.skipTcal = true;
    this.trackTime(buf, offset);
  }
}
