import { PT, PACKET_KINDS, CTX_NONE, type PacketContext } from './kinds.js';
import {
  RawPacket,
  decodeRaw,
  NEED_MORE_BYTES,
  ERR_BAD_OPCODE,
  dialectCode,
  type PacketDialect,
} from './raw-decode.js';

/**
 * Flat packet objects, one interface per kind, after libipt's struct
 * pt_packet: fields are the packet's own payload, never anything that needs
 * the code image or earlier packets (the last IP is LastIp's job).
 * `offset` is the packet's offset in the buffer it was decoded from, `size`
 * its length in bytes. u64 payloads are bigint; small fields are numbers.
 */
interface Base {
  offset: number;
  size: number;
}
export interface PadPacket extends Base {
  kind: 'pad';
}
export interface PsbPacket extends Base {
  kind: 'psb';
}
export interface PsbEndPacket extends Base {
  kind: 'psbend';
}
export interface OvfPacket extends Base {
  kind: 'ovf';
}
export interface StopPacket extends Base {
  kind: 'stop';
}
/** TNT: `count` branches; bit count-1 of `bits` is the oldest (libipt pt_packet_tnt). */
export interface TntPacket extends Base {
  kind: 'tnt.8' | 'tnt.64';
  count: number;
  bits: bigint;
}
/** TIP/TIP.PGE/TIP.PGD/FUP: `ip` is the raw (compressed) payload, absent when ipc = 0. */
export interface IpPacket extends Base {
  kind: 'tip' | 'tip.pge' | 'tip.pgd' | 'fup';
  ipc: 0 | 1 | 2 | 3 | 4 | 6;
  ip?: bigint;
}
export interface ModeExecPacket extends Base {
  kind: 'mode.exec';
  csl: boolean;
  csd: boolean;
  iflag: boolean;
}
export interface ModeTsxPacket extends Base {
  kind: 'mode.tsx';
  intx: boolean;
  abrt: boolean;
}
/** PIP: cr3 with bits 4:0 zero, nr = non-root (VMX). */
export interface PipPacket extends Base {
  kind: 'pip';
  cr3: bigint;
  nr: boolean;
}
export interface TscPacket extends Base {
  kind: 'tsc';
  tsc: bigint;
}
export interface MtcPacket extends Base {
  kind: 'mtc';
  ctc: number;
}
export interface CycPacket extends Base {
  kind: 'cyc';
  value: bigint;
}
export interface TmaPacket extends Base {
  kind: 'tma';
  ctc: number;
  fc: number;
}
export interface CbrPacket extends Base {
  kind: 'cbr';
  ratio: number;
}
/** VMCS: base address (payload << 12). */
export interface VmcsPacket extends Base {
  kind: 'vmcs';
  base: bigint;
}
/** PTWRITE: plc 0 = 4-byte, 1 = 8-byte payload; ipBit = a FUP follows. */
export interface PtwPacket extends Base {
  kind: 'ptw';
  plc: number;
  ipBit: boolean;
  payload: bigint;
}
export interface MwaitPacket extends Base {
  kind: 'mwait';
  hints: number;
  ext: number;
}
export interface PwrePacket extends Base {
  kind: 'pwre';
  state: number;
  subState: number;
  hw: boolean;
}
export interface PwrxPacket extends Base {
  kind: 'pwrx';
  last: number;
  deepest: number;
  interrupt: boolean;
  store: boolean;
  autonomous: boolean;
}
export interface ExstopPacket extends Base {
  kind: 'exstop';
  ipBit: boolean;
}
/** BBP: sz4 = the following BIPs carry 4-byte values; type = block item type. */
export interface BbpPacket extends Base {
  kind: 'bbp';
  sz4: boolean;
  type: number;
}
export interface BipPacket extends Base {
  kind: 'bip';
  id: number;
  value: bigint;
}
export interface BepPacket extends Base {
  kind: 'bep';
  ipBit: boolean;
}
export interface CfePacket extends Base {
  kind: 'cfe';
  ipBit: boolean;
  type: number;
  vector: number;
}
export interface EvdPacket extends Base {
  kind: 'evd';
  type: number;
  payload: bigint;
}
export interface MntPacket extends Base {
  kind: 'mnt';
  payload: bigint;
}
/** TRIG (libipt >= 2.2): trigger bits, IP/MULT flags, optional instruction count (icnt when icntv). */
export interface TrigPacket extends Base {
  kind: 'trig';
  trbv: number;
  ipBit: boolean;
  mult: boolean;
  icntv: boolean;
  icnt: number;
}

export type Packet =
  | PadPacket
  | PsbPacket
  | PsbEndPacket
  | OvfPacket
  | StopPacket
  | TntPacket
  | IpPacket
  | ModeExecPacket
  | ModeTsxPacket
  | PipPacket
  | TscPacket
  | MtcPacket
  | CycPacket
  | TmaPacket
  | CbrPacket
  | VmcsPacket
  | PtwPacket
  | MwaitPacket
  | PwrePacket
  | PwrxPacket
  | ExstopPacket
  | BbpPacket
  | BipPacket
  | BepPacket
  | CfePacket
  | EvdPacket
  | MntPacket
  | TrigPacket;

/**
 * A packet-level decode error (libipt -pte_bad_opc / -pte_bad_packet /
 * -pte_eos). Trace errors are data, not exceptions: the iterator yields this
 * and resumes at the next PSB.
 */
export interface PacketError {
  kind: 'error';
  offset: number;
  code: 'bad-opcode' | 'bad-packet' | 'truncated';
  /** Bytes skipped up to the next PSB (or the end of the buffer). */
  skipped?: number;
}

/** Returned by decodePacket when the packet continues past the end of the bytes. */
export const NEED_MORE: unique symbol = Symbol('NEED_MORE');
export type NeedMore = typeof NEED_MORE;

function u64(lo: number, hi: number): bigint {
  // one bigint instead of four for the common small payloads
  if (hi === 0) return BigInt(lo);
  if (hi < 0x200000) return BigInt(hi * 4294967296 + lo);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Builds the packet object for a successful decodeRaw. */
export function toPacket(r: RawPacket, offset: number): Packet {
  const size = r.size;
  switch (r.type) {
    case PT.PAD:
      return { kind: 'pad', offset, size };
    case PT.PSB:
      return { kind: 'psb', offset, size };
    case PT.PSBEND:
      return { kind: 'psbend', offset, size };
    case PT.OVF:
      return { kind: 'ovf', offset, size };
    case PT.STOP:
      return { kind: 'stop', offset, size };
    case PT.TNT8:
    case PT.TNT64:
      return { kind: r.type === PT.TNT8 ? 'tnt.8' : 'tnt.64', offset, size, count: r.count, bits: u64(r.lo, r.hi) };
    case PT.TIP:
    case PT.TIP_PGE:
    case PT.TIP_PGD:
    case PT.FUP: {
      const kind = PACKET_KINDS[r.type] as IpPacket['kind'];
      const p: IpPacket = { kind, offset, size, ipc: r.ipc as IpPacket['ipc'] };
      if (r.ipc) p.ip = u64(r.lo, r.hi);
      return p;
    }
    case PT.MODE_EXEC:
      return { kind: 'mode.exec', offset, size, csl: !!(r.lo & 1), csd: !!(r.lo & 2), iflag: !!(r.lo & 4) };
    case PT.MODE_TSX:
      return { kind: 'mode.tsx', offset, size, intx: !!(r.lo & 1), abrt: !!(r.lo & 2) };
    case PT.PIP: {
      const payload = u64(r.lo, r.hi);
      return { kind: 'pip', offset, size, cr3: (payload >> 1n) << 5n, nr: !!(r.lo & 1) };
    }
    case PT.TSC:
      return { kind: 'tsc', offset, size, tsc: u64(r.lo, r.hi) };
    case PT.MTC:
      return { kind: 'mtc', offset, size, ctc: r.lo };
    case PT.CYC:
      return { kind: 'cyc', offset, size, value: u64(r.lo, r.hi) };
    case PT.TMA:
      return { kind: 'tma', offset, size, ctc: r.lo, fc: r.count };
    case PT.CBR:
      return { kind: 'cbr', offset, size, ratio: r.lo };
    case PT.VMCS:
      return { kind: 'vmcs', offset, size, base: u64(r.lo, r.hi) << 12n };
    case PT.PTW:
      return { kind: 'ptw', offset, size, plc: r.count, ipBit: !!r.flag, payload: u64(r.lo, r.hi) };
    case PT.MWAIT:
      return { kind: 'mwait', offset, size, hints: r.lo, ext: r.hi };
    case PT.PWRE:
      // hw: libipt's bit (payload bit 3); perf's text tests bit 7 instead (src/format/pt-packets-perf.ts)
      return {
        kind: 'pwre',
        offset,
        size,
        state: (r.lo >>> 12) & 0xf,
        subState: (r.lo >>> 8) & 0xf,
        hw: !!(r.lo & 0x8),
      };
    case PT.PWRX:
      return {
        kind: 'pwrx',
        offset,
        size,
        last: (r.lo >>> 4) & 0xf,
        deepest: r.lo & 0xf,
        interrupt: !!(r.lo & 0x100),
        store: !!(r.lo & 0x400),
        autonomous: !!(r.lo & 0x800),
      };
    case PT.EXSTOP:
      return { kind: 'exstop', offset, size, ipBit: !!r.flag };
    case PT.BBP:
      return { kind: 'bbp', offset, size, sz4: !!r.count, type: r.lo };
    case PT.BIP:
      return { kind: 'bip', offset, size, id: r.count, value: u64(r.lo, r.hi) };
    case PT.BEP:
      return { kind: 'bep', offset, size, ipBit: !!r.flag };
    case PT.CFE:
      return { kind: 'cfe', offset, size, ipBit: !!r.flag, type: r.count, vector: r.lo };
    case PT.EVD:
      return { kind: 'evd', offset, size, type: r.count, payload: u64(r.lo, r.hi) };
    case PT.MNT:
      return { kind: 'mnt', offset, size, payload: u64(r.lo, r.hi) };
    case PT.TRIG:
      return {
        kind: 'trig',
        offset,
        size,
        trbv: r.lo,
        ipBit: !!r.flag,
        mult: !!(r.count & 1),
        icntv: !!(r.count & 2),
        icnt: r.hi,
      };
    default:
      throw new Error(`toPacket: unknown packet type code ${r.type}`);
  }
}

const scratch = new RawPacket();

export interface DecodeOptions {
  /** BBP context (see kinds.ts); CTX_NONE by default. */
  ctx?: PacketContext;
  /** Validation rules; 'libipt' by default. */
  dialect?: PacketDialect;
  /** Bytes up to this offset are available (default bytes.length). */
  end?: number;
}

/**
 * Decodes the one packet at `offset`.
 * Returns the packet; NEED_MORE if it runs past the end of the bytes; or a
 * PacketError (bad-opcode / bad-packet) naming `offset`. Never throws on
 * malformed bytes.
 */
export function decodePacket(
  bytes: Uint8Array,
  offset: number,
  opts: DecodeOptions = {},
): Packet | NeedMore | PacketError {
  const end = opts.end ?? bytes.length;
  const n = decodeRaw(bytes, offset, end, scratch, opts.ctx ?? CTX_NONE, dialectCode(opts.dialect));
  if (n > 0) return toPacket(scratch, offset);
  if (n === NEED_MORE_BYTES) return NEED_MORE;
  return { kind: 'error', offset, code: n === ERR_BAD_OPCODE ? 'bad-opcode' : 'bad-packet' };
}
