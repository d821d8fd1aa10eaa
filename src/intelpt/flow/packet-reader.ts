/**
 * Packet handling for the flow decoder: one CPU's trace read packet by packet
 * through a bounded window of its TraceSource, with the IP-compression state
 * (last IP) that packets update, and the look-ahead probes the decoder makes
 * (the FUP inside a PSB+, the time a coming timing point would set).
 *
 * Offsets given out (lastOffset) are in the CPU's whole trace, whatever part
 * of it the window holds. The window keeps every byte from the next packet to
 * decode on (from the start of a PSB search while searching), and before each
 * packet or probe it holds at least AHEAD or PROBE bytes past it unless the
 * trace ends sooner; so each packet, probe and PSB search sees the bytes the
 * whole trace would show it, and decoding through the window gives what
 * decoding the whole trace at once gives (cpu-flow.test.ts checks that).
 */
import { PacketCursor } from '../packets/cursor.js';
import { LastIp, signExtend48 } from '../packets/last-ip.js';
import { CTX_NONE, PT } from '../packets/kinds.js';
import { ERR_BAD_OPCODE, NEED_MORE_BYTES, findPsb, type RawPacket } from '../packets/raw-decode.js';
import type { TraceSource } from './trace-source.js';

/** next(): no more packets (the trace ended, or ends inside a packet). */
export const PACKET_END = -1;
/** next(): bytes that are no packet; see badReason. */
export const PACKET_BAD = -2;

/**
 * Bytes of trace a reader holds by default: large enough that a refill (one
 * pread) is rare next to the decoding of what it brings, small enough that
 * a trace of any size costs the same memory per CPU.
 */
export const TRACE_WINDOW = 256 << 10;
/** Bytes kept past the next packet (the largest packet, PSB, is 16). */
const AHEAD = 64;
/** Bytes kept past a probe's start: a probe reads at most 64 packets of at most 16 bytes. */
const PROBE = 4096;
const PROBE_PACKETS = 64;
/** Bytes a lookahead sees past the packet just read (a perf AUXTRACE buffer's size, as perf records them). */
const LOOKAHEAD = 64 << 10;

export class PacketReader {
  /** Decodes the window's bytes; replaced when the window moves (use `raw` after next()). */
  cursor: PacketCursor;
  /** Last IP for IP compression (perf's last_ip / have_last_ip: `ip` / `haveIp`). */
  readonly last = new LastIp();
  /** Why the last next() returned PACKET_BAD, in perf's debug-log words. */
  badReason = '';
  private bytes: Uint8Array;
  /** Trace offset of bytes[0] (a multiple of 8: findPsb scans 8-aligned blocks). */
  private base = 0;
  /** Bytes of the window holding trace data. */
  private len: number;
  /** lastOffset when the packet it names has left the window. */
  private lastBefore = -1;
  private complete: boolean;

  /** `window`: bytes to hold at a time (the window grows past it only for a packet run or PSB search longer). */
  constructor(
    private readonly src: TraceSource,
    window = TRACE_WINDOW,
  ) {
    this.bytes = src.whole ?? new Uint8Array(Math.min(src.size, Math.max(window, AHEAD)));
    this.len = src.whole ? src.size : 0;
    this.complete = this.len === src.size;
    this.cursor = new PacketCursor(this.bytes, { start: 0, end: this.len, dialect: 'perf' });
  }

  get raw(): RawPacket {
    return this.cursor.raw;
  }

  /** Trace offset of the packet last decoded (-1 before the first). */
  get lastOffset(): number {
    const l = this.cursor.last;
    return l >= 0 ? this.base + l : this.lastBefore;
  }

  get atEnd(): boolean {
    return this.complete && this.cursor.pos >= this.len;
  }

  /** Can `c` (this.cursor) decode its next packet without a refill? (A failed decode there does not move it.) */
  packetAhead(c: PacketCursor): boolean {
    return this.complete ? c.pos < this.len : this.len - c.pos >= AHEAD;
  }

  /** The next packet other than PAD: its type (PT.*), PACKET_END or PACKET_BAD (the cursor does not move then). */
  next(): number {
    for (;;) {
      let c = this.cursor;
      if (!this.complete && this.len - c.pos < AHEAD) c = this.fill(this.base + c.pos, this.base + c.pos + AHEAD);
      if (c.pos >= this.len) return PACKET_END;
      const n = c.next();
      if (n > 0) {
        if (c.raw.type === PT.PAD) continue;
        return c.raw.type;
      }
      if (n === NEED_MORE_BYTES) {
        // a packet cut off by the end of the trace: nothing more to decode
        c.pos = this.len;
        return PACKET_END;
      }
      this.badReason = n === ERR_BAD_OPCODE ? 'bad opcode' : 'bad packet';
      return PACKET_BAD;
    }
  }

  /** Step back onto the packet last decoded (perf's pkt_step = 0: it is not consumed). */
  unread(): void {
    this.cursor.pos = this.cursor.last;
  }

  /** Move to the next PSB at (orHere) or after the cursor; false (at the end) if there is none. */
  syncToPsb(orHere: boolean): boolean {
    const from = this.base + this.cursor.pos + (orHere ? 0 : 1);
    for (;;) {
      const q = findPsb(this.bytes, from - this.base, this.len);
      // findPsb also reads the 02 82 pairs after a PSB: one found 18 or more bytes before the window's
      // end is the one the whole trace gives; one nearer is searched for again with more bytes.
      const c = this.cursor;
      if (q >= 0 && (this.complete || q + 17 < this.len)) {
        // what PacketCursor.syncForward does on finding one
        c.pos = q;
        c.sync = q;
        c.ctx = CTX_NONE;
        return true;
      }
      if (this.complete) {
        c.pos = this.len;
        c.ctx = CTX_NONE;
        return false;
      }
      this.fill(from, this.base + this.len + 1);
    }
  }

  /** Give up on the rest of the trace. */
  toEnd(): void {
    if (!this.complete) {
      this.lastBefore = this.lastOffset;
      this.base = this.src.size;
      this.len = 0;
      this.complete = true;
      this.bytes = new Uint8Array(0);
      this.cursor = new PacketCursor(this.bytes, { dialect: 'perf' });
      this.src.close();
    }
    this.cursor.pos = this.len;
  }

  /** intel_pt_have_ip: does the IP packet just read give an IP? */
  haveIp(): boolean {
    const ipc = this.cursor.raw.ipc;
    return ipc !== 0 && (this.last.haveIp || ipc === 3 || ipc === 6);
  }

  /** intel_pt_set_last_ip: apply the IP packet just read to the last IP. */
  applyIp(): void {
    const r = this.cursor.raw;
    this.last.updateHalves(r.ipc, r.hi, r.lo);
  }

  /** The TSC packet just read. */
  tscValue(): bigint {
    const r = this.cursor.raw;
    return (BigInt(r.hi) << 32n) | BigInt(r.lo >>> 0);
  }

  /** The IP of the FUP inside the PSB+ at the cursor, when it has one giving the IP in full (IPBytes 3 or 6). */
  psbFupIp(): bigint | undefined {
    const c = this.ahead(PROBE);
    const probe = new PacketCursor(c.bytes, { start: c.pos, end: this.len, dialect: 'perf' });
    for (let i = 0; i < PROBE_PACKETS && !probe.atEnd; i++) {
      if (probe.next() <= 0) return undefined;
      const r = probe.raw;
      if (r.type === PT.PSBEND) return undefined;
      if (r.type === PT.FUP) {
        const v = (BigInt(r.hi >>> 0) << 32n) | BigInt(r.lo >>> 0);
        if (r.ipc === 3) return signExtend48(v);
        if (r.ipc === 6) return v;
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * The TSC that the next packet after PADs would set if it is a timing point:
   * a TSC packet, or a PSB+ holding one before its PSBEND. Undefined otherwise.
   */
  timingTscAhead(): bigint | undefined {
    // Fast path (checked before most packets while a poke is due): the next
    // packet is inside the window and starts with neither TSC nor PSB.
    let c = this.cursor;
    if (!this.complete && this.len - c.pos < PROBE) c = this.fill(this.base + c.pos, this.base + c.pos + PROBE);
    const b = c.bytes;
    let p = c.pos;
    while (p < this.len && b[p] === 0) p++;
    if (p < this.len) {
      const x = b[p];
      if (x !== 0x19 && x !== 0x02) return undefined;
    } else if (this.complete) return undefined;
    return this.timingTscAt(p);
  }

  /**
   * The first byte of the next packet (PADs skipped) when the window holds it, else -1: one look that tells
   * atStop (flow-sync.ts) that neither a TSC (0x19) nor a PSB (0x02 …) is next, without the probes.
   */
  nextLead(): number {
    const c = this.cursor;
    const b = c.bytes;
    const len = this.len;
    let p = c.pos;
    while (p < len && b[p] === 0) p++;
    return p < len ? b[p]! : -1;
  }

  /**
   * The next packet (PADs skipped) makes no decoder state of its own when read in sync: a TNT, TIP, TIP.PGD or
   * FUP (whose walk reports states before the one that samples the time), a MODE, or a timing packet.
   */
  nextIsQuiet(): boolean {
    const c = this.ahead(AHEAD);
    const b = c.bytes;
    let p = c.pos;
    while (p < this.len && b[p] === 0) p++;
    if (p >= this.len) return false;
    const x = b[p]!;
    if (x === 0x02) {
      const y = b[p + 1];
      return y === 0xa3 || y === 0x73;
    }
    const low5 = x & 0x1f;
    return (
      (x & 1) === 0 ||
      (x & 3) === 3 ||
      low5 === 0x0d ||
      low5 === 0x01 ||
      low5 === 0x1d ||
      x === 0x59 ||
      x === 0x99 ||
      x === 0x19
    );
  }

  /**
   * perf's intel_pt_pkt_lookahead: the packets after the one just read, PADs skipped, to `cb` until it returns
   * true, a packet cannot be decoded, or the bytes held end (perf looks no further than its current buffer).
   */
  lookahead(cb: (p: RawPacket) => boolean): void {
    const c = this.ahead(LOOKAHEAD);
    const probe = new PacketCursor(c.bytes, { start: c.pos, end: this.len, dialect: 'perf' });
    while (!probe.atEnd) {
      if (probe.next() <= 0) return;
      if (probe.raw.type !== PT.PAD && cb(probe.raw)) return;
    }
  }

  /** The next packet (PADs skipped) is a PSB or an OVF (or the trace ends). */
  /** The next packet (PADs skipped) is a PSB. */
  nextIsPsb(): boolean {
    const c = this.ahead(AHEAD);
    const b = c.bytes;
    let p = c.pos;
    while (p < this.len && b[p] === 0) p++;
    return p + 1 < this.len && b[p] === 0x02 && b[p + 1] === 0x82;
  }

  nextIsPsbOrOvf(): boolean {
    let c = this.cursor;
    if (!this.complete && this.len - c.pos < PROBE) c = this.fill(this.base + c.pos, this.base + c.pos + PROBE);
    const b = c.bytes;
    let p = c.pos;
    while (p < this.len && b[p] === 0) p++;
    return p + 1 >= this.len || (b[p] === 0x02 && (b[p + 1] === 0x82 || b[p + 1] === 0xf3));
  }

  /** timingTscAhead for a packet starting at p, or PADs running past the window's end. */
  private timingTscAt(at: number): bigint | undefined {
    let c = this.cursor;
    let p = at;
    for (;;) {
      const b = c.bytes;
      while (p < this.len && b[p] === 0) p++;
      if (p < this.len || this.complete) break;
      const shift = this.base;
      c = this.fill(this.base + c.pos, this.base + this.len + 1);
      p += shift - this.base;
    }
    if (p >= this.len) return undefined;
    if (!this.complete && this.len - p < PROBE) {
      const shift = this.base;
      c = this.fill(this.base + c.pos, this.base + p + PROBE);
      p += shift - this.base;
    }
    const b = c.bytes;
    if (b[p] === 0x19) return p + 8 <= this.len ? this.tscAt(p) : undefined;
    if (b[p] === 0x02 && b[p + 1] === 0x82) {
      const probe = new PacketCursor(b, { start: p, end: this.len, dialect: 'perf' });
      for (let i = 0; i < PROBE_PACKETS && !probe.atEnd; i++) {
        if (probe.next() <= 0) return undefined;
        const t = probe.raw.type;
        if (t === PT.TSC) return this.tscAt(probe.last);
        if (t === PT.PSBEND) return undefined;
      }
    }
    return undefined;
  }

  /** The 56-bit TSC payload of the TSC packet at p, from two u32 halves (one bigint, not two per byte). */
  private tscAt(p: number): bigint {
    const b = this.cursor.bytes;
    const lo = (b[p + 1]! | (b[p + 2]! << 8) | (b[p + 3]! << 16) | (b[p + 4]! << 24)) >>> 0;
    const hi = b[p + 5]! | (b[p + 6]! << 8) | (b[p + 7]! << 16);
    return hi ? (BigInt(hi) << 32n) | BigInt(lo) : BigInt(lo);
  }

  /** The cursor, with at least n bytes past its position in the window (or all the trace has). */
  private ahead(n: number): PacketCursor {
    const c = this.cursor;
    if (this.complete || this.len - c.pos >= n) return c;
    return this.fill(this.base + c.pos, this.base + c.pos + n);
  }

  /**
   * Move the window to start at trace offset `keep` (rounded down to 8) and
   * read until it reaches `want` (or as far as its capacity allows past that).
   */
  private fill(keep: number, want: number): PacketCursor {
    const old = this.cursor;
    const oldBase = this.base;
    const from = Math.min(keep, oldBase + this.len) & ~7;
    const shift = from - oldBase;
    const kept = this.len - shift;
    const need = Math.min(want, this.src.size) - from;
    let bytes = this.bytes;
    if (need > bytes.length || kept + AHEAD > bytes.length) {
      bytes = new Uint8Array(Math.max(need, bytes.length * 2, AHEAD));
      bytes.set(this.bytes.subarray(shift, this.len));
    } else {
      bytes.copyWithin(0, shift, this.len);
    }
    const n = Math.min(bytes.length - kept, this.src.size - (from + kept));
    this.src.read(from + kept, bytes, kept, n);
    this.bytes = bytes;
    this.base = from;
    this.len = kept + n;
    this.complete = from + this.len === this.src.size;
    const c = new PacketCursor(bytes, { start: old.pos - shift, end: this.len, dialect: 'perf' });
    c.ctx = old.ctx;
    c.sync = old.sync >= shift ? old.sync - shift : -1;
    if (old.last >= shift) c.last = old.last - shift;
    else if (old.last >= 0) this.lastBefore = oldBase + old.last;
    this.cursor = c;
    if (this.complete) this.src.close();
    return c;
  }
}
