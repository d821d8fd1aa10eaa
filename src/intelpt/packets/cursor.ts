import { CTX_NONE, type PacketContext } from './kinds.js';
import {
  RawPacket,
  decodeRaw,
  nextContext,
  findPsb,
  dialectCode,
  DIALECT_LIBIPT_2_0,
  DIALECT_LIBIPT_2_3,
  NEED_MORE_BYTES,
  ERR_BAD_OPCODE,
  type PacketDialect,
} from './raw-decode.js';
import { toPacket, type Packet, type PacketError } from './packet.js';

export interface CursorOptions {
  /** First offset to decode (default 0). */
  start?: number;
  /** Decode bytes before this offset (default bytes.length). */
  end?: number;
  dialect?: PacketDialect;
}

/**
 * A position in a PT buffer that decodes one packet per `next()` into the
 * reused `raw` (libipt's pt_packet_decoder). Nothing is allocated per packet.
 * `next()` returns the packet size (> 0) and advances, or a non-positive
 * code (NEED_MORE_BYTES, ERR_BAD_OPCODE, ERR_BAD_PACKET) and does NOT move,
 * like pt_pkt_next; then `syncForward()` moves to the next PSB.
 */
export class PacketCursor {
  readonly bytes: Uint8Array;
  readonly end: number;
  readonly dialect: number;
  readonly raw = new RawPacket();
  /** Offset of the next packet to decode. */
  pos: number;
  /** Offset of the packet last decoded by next(). */
  last = -1;
  ctx: PacketContext = CTX_NONE;

  constructor(bytes: Uint8Array, opts: CursorOptions = {}) {
    this.bytes = bytes;
    this.pos = opts.start ?? 0;
    this.end = opts.end ?? bytes.length;
    this.dialect = dialectCode(opts.dialect);
  }

  next(): number {
    const n = decodeRaw(this.bytes, this.pos, this.end, this.raw, this.ctx, this.dialect);
    if (n > 0) {
      this.last = this.pos;
      this.pos += n;
      this.ctx = nextContext(this.ctx, this.raw);
    }
    return n;
  }

  /**
   * Moves to the next PSB strictly after the current position (or at it,
   * when `orHere`). Returns false (and moves to the end) if there is none.
   */
  syncForward(orHere = false): boolean {
    let from = orHere ? this.pos : this.pos + 1;
    if ((this.dialect === DIALECT_LIBIPT_2_0 || this.dialect === DIALECT_LIBIPT_2_3) && !orHere) {
      // libipt's pt_pkt_sync_forward: skip the PSB it last synced to, then
      // "start a bit earlier so we find PSB that have been partially consumed
      // by a preceding packet" (up to 15 bytes back)
      from = this.pos === this.sync ? this.pos + 16 : this.pos;
      from -= Math.min(15, from);
    }
    // a PSB found must start at or after `from` (libipt rejects one before it),
    // which also guarantees progress: an error lies ≥ 16 bytes past the last sync
    const p = findPsb(this.bytes, from, this.end);
    this.ctx = CTX_NONE;
    if (p < 0) {
      this.pos = this.end;
      return false;
    }
    this.pos = p;
    this.sync = p;
    return true;
  }

  /** Offset of the PSB last synced to (libipt's decoder->sync), or -1. */
  sync = -1;

  get atEnd(): boolean {
    return this.pos >= this.end;
  }
}

export interface IterateOptions extends CursorOptions {
  /** Skip to the first PSB before decoding, as ptdump does (default false). */
  syncFirst?: boolean;
}

/**
 * Every packet of a buffer as an object, in order. A malformed packet yields
 * a PacketError with its offset; decoding resumes at the next PSB (the error's
 * `skipped` says how many bytes were passed over). A packet cut off by the end
 * of the buffer yields code 'truncated'.
 */
export function* iteratePackets(bytes: Uint8Array, opts: IterateOptions = {}): Generator<Packet | PacketError> {
  const c = new PacketCursor(bytes, opts);
  if (opts.syncFirst && !c.syncForward(true)) return;
  while (!c.atEnd) {
    const at = c.pos;
    const n = c.next();
    if (n > 0) {
      yield toPacket(c.raw, at);
      continue;
    }
    const code = n === NEED_MORE_BYTES ? 'truncated' : n === ERR_BAD_OPCODE ? 'bad-opcode' : 'bad-packet';
    if (code === 'truncated') {
      yield { kind: 'error', offset: at, code, skipped: c.end - at };
      return;
    }
    c.syncForward();
    yield { kind: 'error', offset: at, code, skipped: c.pos - at };
  }
}
