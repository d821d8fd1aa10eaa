/**
 * Intel PT packet encoder: the writer's half of the packet decoder
 * (libipt's pt_encoder). It produces the byte stream real hardware would for
 * the packets the simulator needs, including hardware-like IP compression
 * against the last IP and TNT accumulation.
 *
 * Packet layouts follow the Intel SDM vol. 3C ch. 33 ("Intel Processor
 * Trace"), the same ones perf's intel-pt-pkt-decoder.c and libipt read.
 */

/** IPBytes field of TIP/TIP.PGE/TIP.PGD/FUP (bits 7:5 of the header byte). */
export const IpCompression = {
  suppressed: 0, // no IP
  update16: 1, // replace bits 15:0 of last IP
  update32: 2, // replace bits 31:0
  sext48: 3, // bits 47:0, sign-extended
  update48: 4, // replace bits 47:0
  full: 6, // all 64 bits
} as const;
export type IpCompressionValue = (typeof IpCompression)[keyof typeof IpCompression];

/** Opcode of the 5-bit IP packet header (bits 4:0). */
export const IpPacketOp = {
  tip: 0x0d,
  tipPge: 0x11,
  tipPgd: 0x01,
  fup: 0x1d,
} as const;

const MASK16 = 0xffffn;
const MASK32 = 0xffffffffn;
const MASK48 = 0xffffffffffffn;
const MASK64 = 0xffffffffffffffffn;

/** How many payload bytes each IPBytes value carries. */
export function ipPayloadBytes(c: number): number {
  switch (c) {
    case 0:
      return 0;
    case 1:
      return 2;
    case 2:
      return 4;
    case 3:
    case 4:
      return 6;
    case 6:
      return 8;
    default:
      return -1;
  }
}

/**
 * The compression real hardware picks for `ip` given the last IP: the
 * smallest update that reproduces `ip`, else a sign-extended 48-bit IP when
 * bits 63:48 repeat bit 47 (all canonical kernel/user addresses), else full.
 */
export function chooseIpCompression(ip: bigint, lastIp: bigint): IpCompressionValue {
  const diff = (ip ^ lastIp) & MASK64;
  if (diff >> 16n === 0n) return IpCompression.update16;
  if (diff >> 32n === 0n) return IpCompression.update32;
  const top = ip >> 47n;
  if (top === 0n || top === 0x1ffffn) return IpCompression.sext48;
  if (diff >> 48n === 0n) return IpCompression.update48;
  return IpCompression.full;
}

/** Apply an IP packet's payload to the last IP, as a decoder does (LastIp). */
export function applyIpCompression(lastIp: bigint, c: number, payload: bigint): bigint {
  switch (c) {
    case 1:
      return (lastIp & ~MASK16 & MASK64) | (payload & MASK16);
    case 2:
      return (lastIp & ~MASK32 & MASK64) | (payload & MASK32);
    case 3:
      return BigInt.asUintN(64, BigInt.asIntN(48, payload & MASK48));
    case 4:
      return (lastIp & ~MASK48 & MASK64) | (payload & MASK48);
    case 6:
      return payload & MASK64;
    default:
      return lastIp;
  }
}

export interface PacketEncoderOptions {
  /** Use TNT-64 (up to 47 bits per packet) instead of TNT-8 (6 bits). */
  longTnt?: boolean;
  initialCapacity?: number;
}

/**
 * Appends packets to a growing buffer. Conditional branch outcomes go in with
 * `branch(taken)`; they are held until a packet must follow them (any IP
 * packet, PSB, timing packets that the caller wants ordered) and flushed as
 * TNT packets, oldest outcome in the highest bit, like hardware.
 */
export class PacketEncoder {
  private buf: Uint8Array;
  pos = 0;
  /** Last IP as a decoder will have it after the packets written so far. */
  lastIp = 0n;
  private tntBits = 0n;
  private tntCount = 0;
  private readonly maxTnt: number;
  readonly longTnt: boolean;

  constructor(opts: PacketEncoderOptions = {}) {
    this.buf = new Uint8Array(opts.initialCapacity ?? 4096);
    this.longTnt = opts.longTnt ?? false;
    this.maxTnt = this.longTnt ? 47 : 6;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.pos));
    this.buf = nb;
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b & 0xff;
  }

  private le(v: bigint, n: number): void {
    this.ensure(n);
    for (let i = 0; i < n; i++) {
      this.buf[this.pos++] = Number(v & 0xffn);
      v >>= 8n;
    }
  }

  /** Number of TNT bits waiting to be written. */
  get pendingTnt(): number {
    return this.tntCount;
  }

  /** Record one conditional branch (or compressed return) outcome. */
  branch(taken: boolean): void {
    this.tntBits = (this.tntBits << 1n) | (taken ? 1n : 0n);
    if (++this.tntCount === this.maxTnt) this.flushTnt();
  }

  /** Write pending TNT bits as one packet (no-op when none are pending). */
  flushTnt(): void {
    if (this.tntCount === 0) return;
    this.tnt(this.tntBits, this.tntCount);
    this.tntBits = 0n;
    this.tntCount = 0;
  }

  /**
   * A TNT packet holding `count` outcomes; bit count-1 of `bits` is the
   * oldest. Short form for ≤ 6 bits (unless longTnt), else TNT-64 (≤ 47).
   */
  tnt(bits: bigint, count: number): void {
    if (count < 1 || count > 47) throw new RangeError(`TNT packet holds 1..47 bits, got ${count}`);
    const payload = (1n << BigInt(count)) | (bits & ((1n << BigInt(count)) - 1n));
    if (count <= 6 && !this.longTnt) {
      this.byte(Number(payload << 1n));
    } else {
      this.byte(0x02);
      this.byte(0xa3);
      this.le(payload, 6);
    }
  }

  /** An IP packet (TIP, TIP.PGE, TIP.PGD, FUP); ip null = suppressed. */
  ipPacket(op: number, ip: bigint | null, compression?: IpCompressionValue): void {
    this.flushTnt();
    if (ip === null) {
      this.byte(op);
      return;
    }
    ip = BigInt.asUintN(64, ip);
    const c = compression ?? chooseIpCompression(ip, this.lastIp);
    const n = ipPayloadBytes(c);
    this.byte((c << 5) | op);
    this.le(ip, n);
    this.lastIp = applyIpCompression(this.lastIp, c, ip);
  }

  tip(ip: bigint | null, c?: IpCompressionValue): void {
    this.ipPacket(IpPacketOp.tip, ip, c);
  }
  tipPge(ip: bigint | null, c?: IpCompressionValue): void {
    this.ipPacket(IpPacketOp.tipPge, ip, c);
  }
  tipPgd(ip: bigint | null, c?: IpCompressionValue): void {
    this.ipPacket(IpPacketOp.tipPgd, ip, c);
  }
  fup(ip: bigint | null, c?: IpCompressionValue): void {
    this.ipPacket(IpPacketOp.fup, ip, c);
  }

  /** PSB (16 bytes): the sync point; a decoder's last IP is 0 after it. */
  psb(): void {
    this.flushTnt();
    this.ensure(16);
    for (let i = 0; i < 8; i++) {
      this.buf[this.pos++] = 0x02;
      this.buf[this.pos++] = 0x82;
    }
    this.lastIp = 0n;
  }
  psbend(): void {
    this.byte(0x02);
    this.byte(0x23);
  }
  pad(n = 1): void {
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
  }
  /** Pad with PAD packets to a multiple of `align` bytes (perf record's 8). */
  padTo(align: number): void {
    const r = this.pos % align;
    if (r) this.pad(align - r);
  }
  ovf(): void {
    this.flushTnt();
    this.byte(0x02);
    this.byte(0xf3);
  }
  /** MODE.Exec: csl = 64-bit code segment, csd = default 32-bit operand size. */
  modeExec(csl = true, csd = false): void {
    this.byte(0x99);
    this.byte((csl ? 1 : 0) | (csd ? 2 : 0));
  }
  /** MODE.TSX (leaf 1): intx / txabort. */
  modeTsx(intx: boolean, abrt: boolean): void {
    this.byte(0x99);
    this.byte(0x20 | (intx ? 1 : 0) | (abrt ? 2 : 0));
  }
  /** TSC: the low 56 bits of the time-stamp counter. */
  tsc(tsc: bigint): void {
    this.byte(0x19);
    this.le(tsc, 7);
  }
  /** MTC: bits of the crystal clock counter selected by mtc_freq. */
  mtc(ctc: number): void {
    this.byte(0x59);
    this.byte(ctc);
  }
  /** TMA: CTC[15:0] and the 9-bit fast counter at the last TSC. */
  tma(ctc: number, fc: number): void {
    this.byte(0x02);
    this.byte(0x73);
    this.byte(ctc & 0xff);
    this.byte((ctc >> 8) & 0xff);
    this.byte(0);
    this.byte(fc & 0xff);
    this.byte((fc >> 8) & 1);
  }
  /** CYC: cycles since the last CYC, 5 bits then 7 per extra byte. */
  cyc(cycles: number): void {
    let v = BigInt(cycles);
    const first = Number(v & 0x1fn) << 3;
    v >>= 5n;
    if (v === 0n) {
      this.byte(first | 0x03);
      return;
    }
    this.byte(first | 0x07);
    while (v !== 0n) {
      const part = Number(v & 0x7fn) << 1;
      v >>= 7n;
      this.byte(part | (v !== 0n ? 1 : 0));
    }
  }
  /** CBR: core:bus ratio. */
  cbr(ratio: number): void {
    this.byte(0x02);
    this.byte(0x03);
    this.byte(ratio);
    this.byte(0);
  }
  /** PIP: CR3 (bits 51:5) and the non-root bit. */
  pip(cr3: bigint, nr = false): void {
    this.byte(0x02);
    this.byte(0x43);
    this.le(((cr3 >> 5n) << 1n) | (nr ? 1n : 0n), 6);
  }
  /** VMCS: the VMCS base address (bits 51:12). */
  vmcs(base: bigint): void {
    this.byte(0x02);
    this.byte(0xc8);
    this.le(base >> 12n, 5);
  }
  /** PTW: a PTWRITE payload of 4 (plc 0) or 8 (plc 1) bytes; `ip`: a FUP follows. */
  ptw(plc: 0 | 1, payload: bigint, ip: boolean): void {
    this.flushTnt();
    this.byte(0x02);
    this.byte(0x12 | (plc << 5) | (ip ? 0x80 : 0));
    this.le(payload, plc ? 8 : 4);
  }
  /** EXSTOP; `ip`: a FUP follows. */
  exstop(ip: boolean): void {
    this.flushTnt();
    this.byte(0x02);
    this.byte(ip ? 0xe2 : 0x62);
  }
  /** MWAIT: the hints (EAX) and extensions (ECX) of the MWAIT instruction. */
  mwait(hints: number, ext: number): void {
    this.byte(0x02);
    this.byte(0xc2);
    this.le(BigInt(hints >>> 0), 4);
    this.le(BigInt(ext >>> 0), 4);
  }
  /** PWRE: target C-state and sub-state, hw = hardware-initiated. */
  pwre(state: number, subState: number, hw: boolean): void {
    this.byte(0x02);
    this.byte(0x22);
    this.byte(hw ? 0x08 : 0);
    this.byte(((state & 0xf) << 4) | (subState & 0xf));
  }
  /** PWRX: last and deepest core C-state, and the wake reason bits (1 interrupt, 4 store, 8 autonomous). */
  pwrx(last: number, deepest: number, wake: number): void {
    this.byte(0x02);
    this.byte(0xa2);
    this.byte(((last & 0xf) << 4) | (deepest & 0xf));
    this.byte(wake & 0xf);
    this.byte(0);
    this.byte(0);
    this.byte(0);
  }
  /** STOP: tracing stopped (e.g. ToPA stop). */
  stop(): void {
    this.flushTnt();
    this.byte(0x02);
    this.byte(0x83);
  }
  /** MNT: an 8-byte maintenance payload. */
  mnt(payload: bigint): void {
    this.byte(0x02);
    this.byte(0xc3);
    this.byte(0x88);
    this.le(payload, 8);
  }
  /** TRIG: trigger bits; `ip`: a FUP follows; `mult`: more triggers; `icnt`: an instruction count. */
  trig(trbv: number, ip: boolean, mult: boolean, icnt?: number): void {
    this.flushTnt();
    this.byte(0xd9);
    this.byte((ip ? 0x80 : 0) | (icnt !== undefined ? 0x40 : 0) | (mult ? 0x20 : 0));
    this.byte(trbv);
    if (icnt !== undefined) this.le(BigInt(icnt & 0xffff), 2);
  }
  /** CFE (event tracing): what changed the flow (type 1 interrupt, 2 IRET, …), its vector; `ip`: a FUP follows. */
  cfe(type: number, vector: number, ip: boolean): void {
    this.flushTnt();
    this.byte(0x02);
    this.byte(0x13);
    this.byte((ip ? 0x80 : 0) | (type & 0x1f));
    this.byte(vector);
  }
  /** EVD (event tracing): data for the next CFE (type 0 CR2, 1 VMX qualification, 2 VMX reason). */
  evd(type: number, payload: bigint): void {
    this.byte(0x02);
    this.byte(0x53);
    this.byte(type & 0x3f);
    this.le(payload, 8);
  }
  /** Raw bytes, for tests of malformed input. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A copy of the bytes written so far (pending TNT bits are not flushed). */
  bytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
  /** Bytes [from, to) as a view; valid until the next write. */
  view(from = 0, to = this.pos): Uint8Array {
    return this.buf.subarray(from, to);
  }
}
