import { PT, CTX_BLK_4, CTX_BLK_8, CTX_NONE, type PacketContext } from './kinds.js';

/**
 * The allocation-free core of the packet decoder: one switch on the first
 * byte (libipt pt_pkt_decode / perf intel_pt_do_get_packet), results written
 * into a reused RawPacket. 64-bit payloads are kept as two unsigned 32-bit
 * halves so the hot loop never creates a bigint; `toPacket` turns a RawPacket
 * into a flat object with bigints when a caller wants one.
 *
 * Return value of decodeRaw: > 0 the packet size; 0 (NEED_MORE_BYTES) the
 * packet runs past `end`; ERR_BAD_OPCODE an opcode no spec defines;
 * ERR_BAD_PACKET a known opcode with an impossible payload (libipt
 * -pte_bad_packet). A failed decode leaves `out` unspecified.
 */
export const NEED_MORE_BYTES = 0;
export const ERR_BAD_OPCODE = -1;
export const ERR_BAD_PACKET = -2;

export class RawPacket {
  /** PT.* type code. */
  type = 0;
  /** Size in bytes. */
  size = 0;
  /** IP compression of TIP/TIP.PGE/TIP.PGD/FUP. */
  ipc = 0;
  /** Small integer field: TNT bit count, TMA fc, PTW plc, BBP sz, BIP id, CFE/EVD type. */
  count = 0;
  /** One-bit field: the IP bit of PTW/EXSTOP/BEP/CFE. */
  flag = 0;
  /** Payload bits 0..31 (unsigned). */
  lo = 0;
  /** Payload bits 32..63 (unsigned). */
  hi = 0;
}

/**
 * Dialect: 'libipt' validates like libipt 2.x (reserved TMA bits, CYC at most
 * 64 bits); 'perf' like perf's intel-pt-pkt-decoder.c (rejects MODE payload
 * bits 11b, accepts empty TNT.64, up to 9 CYC extension bytes, TMA reserved
 * bits ignored).
 */
export type PacketDialect = 'libipt' | 'perf' | 'libipt-2.0' | 'libipt-2.3';

/** Dialect codes for decodeRaw (numbers keep the hot path cheap). */
export const DIALECT_LIBIPT = 0;
export const DIALECT_PERF = 1;
/** libipt 2.0.x (Debian's libipt2): no BBP/BIP/BEP/CFE/EVD, which it reports as bad opcodes. */
export const DIALECT_LIBIPT_2_0 = 2;
/** libipt 2.3 (Intel's ptdump/ptxed 2.3): CFE, EVD and TRIG; no BBP/BIP/BEP (bad opcodes). */
export const DIALECT_LIBIPT_2_3 = 3;

export function dialectCode(d: PacketDialect | undefined): number {
  if (d === 'perf') return DIALECT_PERF;
  if (d === 'libipt-2.0') return DIALECT_LIBIPT_2_0;
  return d === 'libipt-2.3' ? DIALECT_LIBIPT_2_3 : DIALECT_LIBIPT;
}

function u16(b: Uint8Array, p: number): number {
  return b[p]! | (b[p + 1]! << 8);
}
function u32(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}
/** Reads n (0..8) little-endian bytes into out.lo/out.hi. */
function readValue(out: RawPacket, b: Uint8Array, p: number, n: number): void {
  if (n >= 4) {
    out.lo = u32(b, p);
    let hi = 0;
    for (let i = n - 1; i >= 4; i--) hi = hi * 256 + b[p + i]!;
    out.hi = hi;
  } else {
    let lo = 0;
    for (let i = n - 1; i >= 0; i--) lo = lo * 256 + b[p + i]!;
    out.lo = lo;
    out.hi = 0;
  }
}

function ipPacket(type: number, b: Uint8Array, pos: number, end: number, out: RawPacket): number {
  const ipc = b[pos]! >>> 5;
  let n: number;
  switch (ipc) {
    case 0:
      n = 0;
      break;
    case 1:
      n = 2;
      break;
    case 2:
      n = 4;
      break;
    case 3:
    case 4:
      n = 6;
      break;
    case 6:
      n = 8;
      break;
    default:
      return ERR_BAD_PACKET;
  }
  if (end - pos < n + 1) return NEED_MORE_BYTES;
  out.type = type;
  out.ipc = ipc;
  if (n) readValue(out, b, pos + 1, n);
  else out.lo = out.hi = 0;
  out.size = n + 1;
  return out.size;
}

function tnt64(b: Uint8Array, pos: number, end: number, out: RawPacket, perf: boolean): number {
  if (end - pos < 8) return NEED_MORE_BYTES;
  // Payload bytes 2..7 (48 bits); the highest set bit is the stop bit.
  let lo = u32(b, pos + 2);
  let hi = u16(b, pos + 6);
  let bits = 0;
  if (hi) bits = 32 + (31 - Math.clz32(hi));
  else if (lo) bits = 31 - Math.clz32(lo);
  // libipt: a payload that is only a stop bit (or nothing) is a bad packet;
  // perf prints it as "TNT  (0)".
  if (bits === 0 && !perf) return ERR_BAD_PACKET;
  if (bits >= 32) hi = (hi & ~(1 << (bits - 32))) >>> 0;
  else lo = (lo & ~(1 << bits)) >>> 0;
  out.type = PT.TNT64;
  out.count = bits;
  out.lo = lo >>> 0;
  out.hi = hi;
  out.size = 8;
  return out.size;
}

function cyc(b: Uint8Array, pos: number, end: number, out: RawPacket, perf: boolean): number {
  let byte = b[pos]!;
  let lo = byte >>> 3;
  let hi = 0;
  let shift = 5;
  let p = pos + 1;
  let ext = byte & 4;
  const maxExt = perf ? 9 : 8;
  while (ext) {
    if (p - pos > maxExt) return ERR_BAD_PACKET;
    if (p >= end) return NEED_MORE_BYTES;
    byte = b[p++]!;
    ext = byte & 1;
    const v = byte >>> 1;
    if (shift + 7 <= 32) lo = (lo | (v << shift)) >>> 0;
    else if (shift >= 32) {
      if (shift < 64) hi = (hi | (v << (shift - 32))) >>> 0;
    } else {
      lo = (lo | (v << shift)) >>> 0;
      hi = (hi | (v >>> (32 - shift))) >>> 0;
    }
    shift += 7;
  }
  out.type = PT.CYC;
  out.lo = lo;
  out.hi = hi;
  out.size = p - pos;
  return out.size;
}

function ext(b: Uint8Array, pos: number, end: number, out: RawPacket, dialect: number): number {
  if (end - pos < 2) return NEED_MORE_BYTES;
  const op = b[pos + 1]!;
  const perf = dialect === DIALECT_PERF;
  if (dialect === DIALECT_LIBIPT_2_0 && (op === 0x63 || op === 0x33 || op === 0xb3 || op === 0x13 || op === 0x53))
    return ERR_BAD_OPCODE;
  if (dialect === DIALECT_LIBIPT_2_3 && (op === 0x63 || op === 0x33 || op === 0xb3)) return ERR_BAD_OPCODE;
  const avail = end - pos;
  if ((op & 0x1f) === 0x12) {
    // PTW: bits 6:5 give the payload size (0: 4 bytes, 1: 8 bytes), bit 7 the IP bit.
    const plc = (op >>> 5) & 3;
    if (plc > 1) return ERR_BAD_PACKET;
    const n = plc ? 8 : 4;
    if (avail < n + 2) return NEED_MORE_BYTES;
    out.type = PT.PTW;
    out.count = plc;
    out.flag = op >>> 7;
    readValue(out, b, pos + 2, n);
    out.size = n + 2;
    return out.size;
  }
  switch (op) {
    case 0x82: // PSB: 02 82 repeated 8 times
      if (avail < 16) return NEED_MORE_BYTES;
      for (let i = 2; i < 16; i += 2) if (b[pos + i] !== 0x02 || b[pos + i + 1] !== 0x82) return ERR_BAD_PACKET;
      out.type = PT.PSB;
      out.size = 16;
      return out.size;
    case 0x23:
      out.type = PT.PSBEND;
      out.size = 2;
      return out.size;
    case 0xa3:
      return tnt64(b, pos, end, out, perf);
    case 0x43: // PIP: 6-byte payload, bit 0 = NR, bits 47:1 = CR3[51:5]
      if (avail < 8) return NEED_MORE_BYTES;
      out.type = PT.PIP;
      readValue(out, b, pos + 2, 6);
      out.size = 8;
      return out.size;
    case 0x83:
      out.type = PT.STOP;
      out.size = 2;
      return out.size;
    case 0x03: // CBR: ratio in byte 2, byte 3 reserved
      if (avail < 4) return NEED_MORE_BYTES;
      out.type = PT.CBR;
      out.lo = b[pos + 2]!;
      out.hi = b[pos + 3]!;
      out.size = 4;
      return out.size;
    case 0x73: {
      // TMA: CTC[15:0] in bytes 2-3, byte 4 reserved, FC[8:0] in bytes 5-6
      if (avail < 7) return NEED_MORE_BYTES;
      const fc = b[pos + 5]! | (b[pos + 6]! << 8);
      if (!perf && (fc & ~0x1ff || b[pos + 4])) return ERR_BAD_PACKET;
      out.type = PT.TMA;
      out.lo = u16(b, pos + 2);
      out.count = fc & 0x1ff;
      out.hi = 0;
      out.size = 7;
      return out.size;
    }
    case 0xc8: // VMCS: 5-byte payload = base >> 12
      if (avail < 7) return NEED_MORE_BYTES;
      out.type = PT.VMCS;
      readValue(out, b, pos + 2, 5);
      out.size = 7;
      return out.size;
    case 0xf3:
      out.type = PT.OVF;
      out.size = 2;
      return out.size;
    case 0xc3: // 3-byte opcode: 02 c3 88 = MNT
      if (avail < 3) return NEED_MORE_BYTES;
      if (b[pos + 2] !== 0x88) return ERR_BAD_OPCODE;
      if (avail < 11) return NEED_MORE_BYTES;
      out.type = PT.MNT;
      readValue(out, b, pos + 3, 8);
      out.size = 11;
      return out.size;
    case 0x62:
    case 0xe2:
      out.type = PT.EXSTOP;
      out.flag = op >>> 7;
      out.size = 2;
      return out.size;
    case 0xc2: // MWAIT: hints u32 at 2, ext u32 at 6
      if (avail < 10) return NEED_MORE_BYTES;
      out.type = PT.MWAIT;
      out.lo = u32(b, pos + 2);
      out.hi = u32(b, pos + 6);
      out.size = 10;
      return out.size;
    case 0x22:
      if (avail < 4) return NEED_MORE_BYTES;
      out.type = PT.PWRE;
      out.lo = u16(b, pos + 2);
      out.hi = 0;
      out.size = 4;
      return out.size;
    case 0xa2:
      if (avail < 7) return NEED_MORE_BYTES;
      out.type = PT.PWRX;
      readValue(out, b, pos + 2, 5);
      out.size = 7;
      return out.size;
    case 0x63: // BBP: byte 2 bit 7 = SZ (1: 4-byte BIPs), bits 4:0 = type
      if (avail < 3) return NEED_MORE_BYTES;
      out.type = PT.BBP;
      out.count = b[pos + 2]! >>> 7;
      out.lo = b[pos + 2]! & 0x1f;
      out.hi = 0;
      out.size = 3;
      return out.size;
    case 0x33:
    case 0xb3:
      out.type = PT.BEP;
      out.flag = op >>> 7;
      out.size = 2;
      return out.size;
    case 0x13: // CFE: byte 2 bit 7 = IP, bits 4:0 = type; byte 3 = vector
      if (avail < 4) return NEED_MORE_BYTES;
      out.type = PT.CFE;
      out.flag = b[pos + 2]! >>> 7;
      out.count = b[pos + 2]! & 0x1f;
      out.lo = b[pos + 3]!;
      out.hi = 0;
      out.size = 4;
      return out.size;
    case 0x53: // EVD: byte 2 bits 5:0 = type (libipt reads bits 4:0), 8-byte payload
      if (avail < 11) return NEED_MORE_BYTES;
      out.type = PT.EVD;
      out.count = b[pos + 2]! & (perf ? 0x3f : 0x1f);
      readValue(out, b, pos + 3, 8);
      out.size = 11;
      return out.size;
    default:
      return ERR_BAD_OPCODE;
  }
}

/**
 * Decodes the packet at `pos` (bytes before `end` are available).
 * `ctx` is the BBP block context (CTX_NONE unless the previous packet was a
 * BBP or BIP); use `nextContext` to carry it along.
 */
export function decodeRaw(
  b: Uint8Array,
  pos: number,
  end: number,
  out: RawPacket,
  ctx: PacketContext = CTX_NONE,
  dialect = DIALECT_LIBIPT,
): number {
  if (pos >= end) return NEED_MORE_BYTES;
  const perf = dialect === DIALECT_PERF;
  const byte = b[pos]!;
  out.flag = 0;
  out.count = 0;
  if (ctx !== CTX_NONE && (byte & 7) === 4) {
    // BIP: id in bits 7:3, 4- or 8-byte value
    const n = ctx === CTX_BLK_4 ? 4 : 8;
    if (end - pos < n + 1) return NEED_MORE_BYTES;
    out.type = PT.BIP;
    out.count = byte >>> 3;
    readValue(out, b, pos + 1, n);
    out.size = n + 1;
    return out.size;
  }
  if ((byte & 1) === 0) {
    if (byte === 0) {
      out.type = PT.PAD;
      out.size = 1;
      return out.size;
    }
    if (byte === 2) return ext(b, pos, end, out, dialect);
    // TNT.8: bits 7:1 hold the stop bit and up to 6 taken/not-taken bits
    const v = byte >>> 1;
    const bits = 31 - Math.clz32(v);
    out.type = PT.TNT8;
    out.count = bits;
    out.lo = v & ~(1 << bits);
    out.hi = 0;
    out.size = 1;
    return out.size;
  }
  if (byte & 2) return cyc(b, pos, end, out, perf);
  switch (byte & 0x1f) {
    case 0x0d:
      return ipPacket(PT.TIP, b, pos, end, out);
    case 0x11:
      return ipPacket(PT.TIP_PGE, b, pos, end, out);
    case 0x01:
      return ipPacket(PT.TIP_PGD, b, pos, end, out);
    case 0x1d:
      return ipPacket(PT.FUP, b, pos, end, out);
    case 0x19:
      switch (byte) {
        case 0x99: {
          // MODE: bits 7:5 of byte 1 = leaf (0 exec, 1 tsx), bits 2:0 = mode bits
          if (end - pos < 2) return NEED_MORE_BYTES;
          const p = b[pos + 1]!;
          const leaf = p >>> 5;
          if (leaf === 0) {
            if (perf && (p & 3) === 3) return ERR_BAD_PACKET;
            out.type = PT.MODE_EXEC;
            out.lo = p & 7;
          } else if (leaf === 1) {
            if (perf && (p & 3) === 3) return ERR_BAD_PACKET;
            out.type = PT.MODE_TSX;
            out.lo = p & 3;
          } else return ERR_BAD_PACKET;
          out.hi = 0;
          out.count = p;
          out.size = 2;
          return out.size;
        }
        case 0x19:
          if (end - pos < 8) return NEED_MORE_BYTES;
          out.type = PT.TSC;
          readValue(out, b, pos + 1, 7);
          out.size = 8;
          return out.size;
        case 0x59:
          if (end - pos < 2) return NEED_MORE_BYTES;
          out.type = PT.MTC;
          out.lo = b[pos + 1]!;
          out.hi = 0;
          out.size = 2;
          return out.size;
        case 0xd9:
          return dialect === DIALECT_LIBIPT || dialect === DIALECT_LIBIPT_2_3 ? trig(b, pos, end, out) : ERR_BAD_OPCODE;
        default:
          return ERR_BAD_OPCODE;
      }
    default:
      return ERR_BAD_OPCODE;
  }
}

/**
 * TRIG (libipt >= 2.2 pt_pkt_read_trig): byte 1 bit 7 = IP, bit 6 = ICNTV
 * (a 16-bit instruction count follows the 3-byte packet), bit 5 = MULT;
 * byte 2 = TRBV. flag = IP, count = byte 1 bits 7:5, lo = TRBV, hi = ICNT.
 */
function trig(b: Uint8Array, pos: number, end: number, out: RawPacket): number {
  if (end - pos < 3) return NEED_MORE_BYTES;
  const f = b[pos + 1]!;
  const n = f & 0x40 ? 5 : 3;
  if (end - pos < n) return NEED_MORE_BYTES;
  out.type = PT.TRIG;
  out.flag = f >>> 7;
  out.count = f >>> 5;
  out.lo = b[pos + 2]!;
  out.hi = n === 5 ? u16(b, pos + 3) : 0;
  out.size = n;
  return n;
}

/** The BBP block context after a packet of type `type` (perf intel_pt_upd_pkt_ctx). */
export function nextContext(ctx: PacketContext, out: RawPacket): PacketContext {
  switch (out.type) {
    case PT.BBP:
      return out.count ? CTX_BLK_4 : CTX_BLK_8;
    case PT.PAD:
    case PT.TSC:
    case PT.TMA:
    case PT.MTC:
    case PT.FUP:
    case PT.CYC:
    case PT.CBR:
    case PT.MNT:
    case PT.EXSTOP:
    case PT.PWRE:
    case PT.PWRX:
    case PT.BIP:
      return ctx;
    default:
      return CTX_NONE;
  }
}

function isPsbAt(b: Uint8Array, q: number, end: number): boolean {
  if (q < 0 || q + 16 > end) return false;
  for (let i = 0; i < 16; i += 2) if (b[q + i] !== 0x02 || b[q + i + 1] !== 0x82) return false;
  return true;
}

/**
 * The next PSB, found the way libipt's pt_sync_forward finds it: scan the
 * 8-byte-aligned words from `from` for the PSB payload pattern, then take the
 * PSB that ends where that run of 02 82 pairs ends. A PSB that starts before
 * `from` is skipped (libipt 2.0.5's pt_pkt_sync_forward finds PSBs a
 * preceding packet partly consumed by starting up to 15 bytes early: see
 * PacketCursor.syncForward). Returns its offset or -1.
 */
export function findPsb(b: Uint8Array, from: number, end: number): number {
  let pos = (from + 7) & ~7;
  for (;;) {
    const cur = pos;
    pos += 8;
    if (pos > end) return -1;
    const x = b[cur]!;
    if (x !== 0x02 && x !== 0x82) continue;
    const y = x === 0x02 ? 0x82 : 0x02;
    if (
      b[cur + 1] !== y ||
      b[cur + 2] !== x ||
      b[cur + 3] !== y ||
      b[cur + 4] !== x ||
      b[cur + 5] !== y ||
      b[cur + 6] !== x ||
      b[cur + 7] !== y
    )
      continue;
    let q = x === 0x02 ? cur : cur + 1;
    while (q + 1 < end && b[q] === 0x02 && b[q + 1] === 0x82) q += 2;
    q -= 16;
    if (!isPsbAt(b, q, end)) continue;
    if (q < from) continue;
    return q;
  }
}
