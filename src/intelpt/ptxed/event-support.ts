/**
 * Small pieces the event decoder's files share: reading packets ahead
 * without moving (libipt copies its packet decoder for that), the exec mode
 * of a MODE.Exec, and libipt's rule for timing update errors.
 */
import { PacketCursor } from '../packets/cursor.js';
import { ERR_BAD_OPCODE, ERR_BAD_PACKET } from '../packets/raw-decode.js';
import { toPacket, type Packet } from '../packets/packet.js';
import type { TimeError } from '../timing.js';
import { type ExecMode, PtDecodeError } from './event-types.js';

/** Packets BDM70's search for a TIP.PGE after a PSB+ FUP passes over. */
export const BDM70_SKIP: ReadonlySet<string> = new Set([
  'pad',
  'tsc',
  'cbr',
  'psbend',
  'pip',
  'mode.exec',
  'mode.tsx',
  'vmcs',
  'tma',
  'mtc',
  'cyc',
  'mnt',
]);
/** Packets after a position, for the searches ahead (libipt copies its packet decoder). */
export class Lookahead {
  private readonly c: PacketCursor;
  error: 'eos' | 'bad_opc' | 'bad_packet' | undefined;
  constructor(bytes: Uint8Array, pos: number) {
    this.c = new PacketCursor(bytes, { dialect: 'libipt-2.3', start: pos });
  }
  get pos(): number {
    return this.c.pos;
  }
  nextPacket(): Packet | undefined {
    const at = this.c.pos;
    const n = this.c.next();
    if (n <= 0) {
      this.error = n === ERR_BAD_OPCODE ? 'bad_opc' : n === ERR_BAD_PACKET ? 'bad_packet' : 'eos';
      return undefined;
    }
    return toPacket(this.c.raw, at);
  }
}

/** libipt ignores configuration errors of the timing updates (imprecise time) and fails on the others. */
export function timeCheck(e: TimeError | undefined): void {
  if (e && e !== 'bad_config') throw new PtDecodeError(e);
}

export function execMode(csl: boolean, csd: boolean): ExecMode {
  if (csl) return csd ? 'unknown' : '64-bit';
  return csd ? '32-bit' : '16-bit';
}
