/**
 * The event decoder's state as its packet rules see it: the PSB+, OVF, IP
 * and CFE/EVD halves (event-psb.ts, event-ovf.ts, event-ip.ts, event-cfe.ts)
 * work on this interface, which EventDecoder (event-decoder.ts) implements,
 * so that those modules and the decoder do not import each other.
 */
import type { LastIp } from '../packets/last-ip.js';
import type { PacketCursor } from '../packets/cursor.js';
import type { IpPacket, Packet } from '../packets/packet.js';
import type { TimeCalibration, TimeTracker, TimingConfig } from '../timing.js';
import type { Errata } from '../cpu.js';
import type { PtDecodeError, PtEvent, PtEventType } from './event-types.js';
import type { Lookahead } from './event-support.js';

/** Event bindings (libipt evb_*): which packet completes a queued event. */
export const EVB = { psbend: 1, tip: 2, fup: 4, fupBound: 8, exstop: 16, pwrx: 32, cfe: 64 } as const;

export interface Queued {
  bind: number;
  ev: PtEvent;
}

/** A packet, or the error that ended the stream there (libipt ppt_invalid with decoder->status). */
export type CurPacket = Packet | { kind: 'invalid'; offset: number; size: 0; error: PtDecodeError };

export interface EventDecoderOptions {
  errata: Errata;
  timing: TimingConfig;
  /** Report iflags events (ptxed --event:iflags). */
  iflags?: boolean;
  /** Keep the timing calibration across an overflow (ptxed --insn:keep-tcal-on-ovf). */
  keepTcalOnOvf?: boolean;
}

export interface EventDecoderState {
  readonly cursor: PacketCursor;
  readonly o: EventDecoderOptions;
  packet: CurPacket;
  queue: Queued[];
  readonly ip: LastIp;
  enabled: boolean;
  /** The current packet was bound by an event already reported (libipt decoder->bound). */
  bound: boolean;
  event: PtEvent | undefined;
  modeValid: boolean;
  csl: boolean;
  csd: boolean;
  iflag: boolean;
  time: TimeTracker;
  tcal: TimeCalibration;
  fetchPacket(): void;
  enqueue(bind: number, type: PtEventType): PtEvent;
  dequeue(mask: number): PtEvent | undefined;
  find(mask: number, type: PtEventType): PtEvent | undefined;
  pending(mask: number): boolean;
  /** Publish a standalone event for the current packet and move past it. */
  standalone(ev: PtEvent): true;
  stamp(ev: PtEvent): void;
  setIp(ev: PtEvent): void;
  updateIp(p: IpPacket): void;
  lookahead(): Lookahead;
  lookaheadAt(pos: number): Lookahead;
  decodePsbend(): boolean;
  resumeAt(pos: number, packet: Packet): void;
  queueTsxForFup(intx: boolean, abrt: boolean): void;
}
