import type { Packet } from './packet.js';

const M16 = 0xffffn;
const M32 = 0xffffffffn;
const M48 = 0xffffffffffffn;
const M64 = 0xffffffffffffffffn;
/** Entries of LastIp's memo of recent IPs (a power of two). */
export const MEMO = 4096;

/** An IPBytes-3 payload: 48 bits, bit 47 sign-extended to 64. */
export function signExtend48(v: bigint): bigint {
  return v & (1n << 47n) ? (v & M48) | (M64 & ~M48) : v & M48;
}

/**
 * Last-IP reconstruction for compressed IP payloads, libipt pt_last_ip
 * semantics: the decoder remembers the last full IP; update-16/32/48 replace
 * its low bits, sext-48 sign-extends bit 47, full replaces it, suppressed
 * (ipc 0) marks it suppressed without changing it. A PSB resets it (call
 * reset()), so after a PSB only sext-48/full give a usable IP.
 */
export class LastIp {
  ip = 0n;
  /** An IP has been seen since the last reset. */
  haveIp = false;
  /** The last IP packet had ipc 0. */
  suppressed = false;

  /**
   * The memo entry updateHalves last used (its index, 0 … MEMO-1): a hash of `ip` while `ip` is still the one
   * updateHalves made, for callers that keep something per recent IP (the flow walker's blocks of TIP targets).
   */
  slot = 0;
  /** `ip` as two u32 halves, valid while `ip` is still `halvesOf` (updateHalves keeps them; writing ip voids them). */
  private hi = 0;
  private lo = 0;
  private halvesOf = 0n;
  /** Recent IPs by their halves (direct-mapped): the same targets recur, so most updates make no bigint. */
  private readonly memoHi = new Uint32Array(MEMO);
  private readonly memoLo = new Uint32Array(MEMO);
  private readonly memoIp: bigint[] = new Array<bigint>(MEMO).fill(0n);

  reset(): void {
    this.ip = 0n;
    this.haveIp = false;
    this.suppressed = false;
  }

  /**
   * Applies one IP payload. Returns false for an ipc no spec defines (5, 7),
   * leaving the state unchanged (libipt -pte_bad_packet).
   */
  update(ipc: number, payload: bigint = 0n): boolean {
    switch (ipc) {
      case 0:
        this.suppressed = true;
        return true;
      case 1:
        this.ip = (this.ip & ~M16 & M64) | (payload & M16);
        break;
      case 2:
        this.ip = (this.ip & ~M32 & M64) | (payload & M32);
        break;
      case 3:
        this.ip = signExtend48(payload);
        break;
      case 4:
        this.ip = (this.ip & ~M48 & M64) | (payload & M48);
        break;
      case 6:
        this.ip = payload & M64;
        break;
      default:
        return false;
    }
    this.haveIp = true;
    this.suppressed = false;
    return true;
  }

  /**
   * update() with the payload as two u32 halves (the raw decoder's hi/lo), computed on numbers: the same
   * result, without the half dozen bigints update() makes per packet.
   */
  updateHalves(ipc: number, phi: number, plo: number): boolean {
    if (ipc === 0) {
      this.suppressed = true;
      return true;
    }
    if (this.ip !== this.halvesOf) {
      this.hi = Number(this.ip >> 32n) >>> 0;
      this.lo = Number(this.ip & M32) >>> 0;
      this.halvesOf = this.ip;
    }
    let hi = this.hi;
    let lo = plo >>> 0;
    switch (ipc) {
      case 1:
        lo = ((this.lo & 0xffff0000) | (plo & 0xffff)) >>> 0;
        break;
      case 2:
        break;
      case 3:
        hi = phi & 0x8000 ? (0xffff0000 | (phi & 0xffff)) >>> 0 : phi & 0xffff;
        break;
      case 4:
        hi = ((hi & 0xffff0000) | (phi & 0xffff)) >>> 0;
        break;
      case 6:
        hi = phi >>> 0;
        break;
      default:
        return false;
    }
    const k = (lo ^ (lo >>> 12) ^ hi) & (MEMO - 1);
    let ip = this.memoIp[k]!;
    if (this.memoHi[k] !== hi || this.memoLo[k] !== lo) {
      ip = (BigInt(hi) << 32n) | BigInt(lo);
      this.memoHi[k] = hi;
      this.memoLo[k] = lo;
      this.memoIp[k] = ip;
    }
    this.slot = k;
    this.hi = hi;
    this.lo = lo;
    this.ip = ip;
    this.halvesOf = ip;
    this.haveIp = true;
    this.suppressed = false;
    return true;
  }

  /** Applies a packet: IP packets update, a PSB resets, others are ignored. */
  apply(p: Packet): void {
    switch (p.kind) {
      case 'tip':
      case 'tip.pge':
      case 'tip.pgd':
      case 'fup':
        this.update(p.ipc, p.ip);
        break;
      case 'psb':
        this.reset();
        break;
      default:
        break;
    }
  }

  /**
   * The current IP, or undefined when none is known (libipt -pte_noip) or the
   * last update was suppressed (-pte_ip_suppressed); `status` tells which.
   */
  query(): bigint | undefined {
    return this.haveIp && !this.suppressed ? this.ip : undefined;
  }

  get status(): 'ok' | 'noip' | 'suppressed' {
    return !this.haveIp ? 'noip' : this.suppressed ? 'suppressed' : 'ok';
  }
}
