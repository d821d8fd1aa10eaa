/**
 * perf's quick decoding (itrace `q` / `qq`, intel_pt_hop_trace) over the
 * synchronizing walker: no code walked, each TIP, FUP or PSB+ with a FUP an
 * instruction sample at its IP (CpuFlow hands packets here first in quick mode).
 */
import { PT } from '../packets/kinds.js';
import { PtErr } from './flow-errors.js';
import { FlowSync } from './flow-sync.js';
import { BranchKind, Step } from './flow-types.js';
import { PACKET_BAD, PACKET_END } from './packet-reader.js';

/** What quick decoding does with a packet (perf's HOP_IGNORE / HOP_PROCESS; else the step's result). */
export const HOP_IGNORE = -1;
export const HOP_PROCESS = -2;

export class QuickHop extends FlowSync {
  /**
   * perf's intel_pt_hop_trace: TNT ignored, no code walked; a TIP, a FUP or a PSB+ with a FUP gives an instruction
   * sample at its IP; a FUP while tracing, then the TIP that must follow, the asynchronous branch between them. In
   * leap mode (`qq`) every packet but a PSB is skipped to the next PSB.
   */
  protected hop(t: number): number {
    const rd = this.reader;
    // every state hop mode returns is one perf samples the time in (after the packets it reads)
    if (t !== PT.PSB) this.clock.refresh();
    if (this.quickSync >= 2 && t !== PT.PSB) {
      rd.unread();
      if (!rd.syncToPsb(false)) return Step.End;
      return this.atStop() ? Step.Pause : HOP_IGNORE;
    }
    switch (t) {
      case PT.TNT8:
      case PT.TNT64:
        return HOP_IGNORE;
      case PT.TIP_PGD:
        this.pge = false;
        if (!rd.raw.ipc) return HOP_IGNORE;
        this.setIp();
        this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceEnd, this.tsc);
        return Step.Ok;
      case PT.TIP:
        if (!rd.raw.ipc) return HOP_IGNORE;
        this.setIp();
        this.sink.quick?.(this.cpu, this.ip, this.tsc);
        return Step.Ok;
      case PT.FUP: {
        if (!rd.raw.ipc) return HOP_IGNORE;
        this.setIp();
        if (!this.pge) {
          this.sink.quick?.(this.cpu, this.ip, this.tsc);
          return Step.Ok;
        }
        return this.hopFupTip();
      }
      case PT.PSB: {
        rd.unread();
        const r = this.walkPsb();
        if (r !== Step.Ok) return r;
        this.clock.refresh();
        if (this.psbFup) this.sink.quick?.(this.cpu, this.ip, this.tsc);
        return Step.Ok;
      }
      default:
        return HOP_PROCESS;
    }
  }

  /** A FUP while tracing in hop mode: its IP sampled as the branch to the TIP after it, then that TIP's target. */
  private hopFupTip(): Step {
    const rd = this.reader;
    const from = this.ip;
    for (;;) {
      const t = this.next();
      if (t === PACKET_END) return Step.End;
      if (t === PACKET_BAD) return Step.Error;
      if (t === PT.MODE_EXEC) continue;
      if (t === PT.MTC || t === PT.CYC) {
        this.timingPacket(t);
        continue;
      }
      if (t !== PT.TIP && t !== PT.TIP_PGE && t !== PT.TIP_PGD) {
        rd.unread();
        return this.fail(PtErr.MISMAT, 'Missing TIP after FUP', this.resync.missingPacket);
      }
      const pgd = t === PT.TIP_PGD;
      this.clock.refresh();
      if (rd.raw.ipc) this.setIp();
      const to = rd.raw.ipc ? this.ip : 0n;
      const kind = pgd ? BranchKind.traceEnd : BranchKind.async;
      this.sink.quick?.(this.cpu, from, this.tsc, { kind, to });
      if (pgd) this.pge = false;
      this.sink.branch?.(this.cpu, from, to, kind, this.tsc);
      if (to) this.sink.quick?.(this.cpu, to, this.tsc);
      return Step.Ok;
    }
  }
}
