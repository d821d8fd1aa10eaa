/**
 * The time libipt 2.3's instruction decoder reports (pt_insn_time, ptxed
 * `--time`) and its tick events (`--event:tick`, enable_tick_events). The
 * decoder's time is the TSC of the last event it handed to the user, not of
 * the last timing packet: consuming TNT and TIP events does not move it. With
 * tick events on, a TNT or TIP event whose TSC differs from that time makes a
 * tick event carrying the new TSC (which then becomes the time):
 *
 * - a TIP, after the indirect branch that took it, at the branch's IP;
 * - a TNT, after the conditional branch (or compressed return) that used one
 *   of its bits, at the IP following that instruction;
 * - a TNT fetched right after the previous TNT ran out without a tick, at
 *   the same IP (before the next instruction).
 *
 * Measured against ptxed 2.3 (test/ptxed-timing-filter-libipt23.test.ts).
 */
import { newEvent, type PtEvent } from './event-types.js';

export class PtxedClock {
  /** The decoder's time: the TSC of the last event reported (0 before any). */
  time = 0n;

  constructor(private readonly ticks: boolean) {}

  /** An event was handed to the user (printed or a status update). */
  delivered(ev: PtEvent): void {
    this.time = ev.tsc ?? 0n;
  }

  /** The tick event for a TNT/TIP stamped `tsc` at `ip`, or undefined when ticks are off or time did not change. */
  tick(tsc: bigint | undefined, ip: bigint): PtEvent | undefined {
    if (!this.ticks || (tsc ?? 0n) === this.time) return undefined;
    const ev = newEvent('tick');
    ev.ip = ip;
    ev.tsc = tsc;
    return ev;
  }
}
