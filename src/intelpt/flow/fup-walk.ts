/**
 * The asynchronous-branch walks of the flow decoder (perf's intel_pt_walk_fup, intel_pt_walk_fup_tip): to a
 * FUP's IP, then the TIP (or TIP.PGE / TIP.PGD) that must follow it. CpuFlow (cpu-flow.ts) runs them.
 */
import { PT } from '../packets/kinds.js';
import { PtErr } from './flow-errors.js';
import { BranchKind, FlowState, Step, WalkStop } from './flow-types.js';
import { PACKET_BAD, PACKET_END } from './packet-reader.js';
import { QuickHop } from './quick-hop.js';

export class FupWalk extends QuickHop {
  /** Walk to the FUP's IP (the last IP): Step.Again when reached, the TIP comes next. */
  protected walkFup(): Step {
    const c = this.walkInsn(this.reader.last.ip);
    if (c === WalkStop.Reached) {
      this.st = FlowState.InSync;
      return Step.Again;
    }
    if (c === WalkStop.Error) return Step.Error;
    if (c === WalkStop.Paused) return Step.Pause;
    if (c === WalkStop.Indirect) return this.fail(PtErr.MISMAT, 'Unexpected indirect branch', FlowState.ErrResync);
    return this.fail(PtErr.MISMAT, 'Unexpected conditional branch', FlowState.ErrResync);
  }

  /** The TIP (or TIP.PGE / TIP.PGD) that must follow a FUP's IP; MODE.Exec may come between. */
  protected walkFupTip(): Step {
    const rd = this.reader;
    for (;;) {
      switch (this.next()) {
        case PACKET_END:
          return Step.End;
        case PACKET_BAD:
          return Step.Error;
        case PT.MODE_EXEC:
          continue;
        case PT.CBR:
          this.readCbr();
          continue;
        case PT.MTC:
        case PT.CYC:
          this.timingPacket(rd.raw.type);
          continue;
        case PT.TIP_PGD: {
          if (this.crossed()) {
            // perf yields after this state: pause before its TIP, walk to the FUP's IP again on resume
            rd.unread();
            this.st = FlowState.Fup;
            this.heldTsc = this.clock.timestamp;
            return Step.Pause;
          }
          this.st = FlowState.InSync;
          this.clock.refresh();
          this.pge = false;
          const from = this.ip;
          if (rd.raw.ipc) this.setIp();
          this.stateDone(from, rd.raw.ipc ? this.ip : 0n);
          this.sink.branch?.(this.cpu, from, rd.raw.ipc ? this.ip : 0n, BranchKind.traceEnd, this.tsc);
          this.sink.event?.(this.cpu, 'disabled', from, rd.lastOffset);
          return Step.Ok;
        }
        case PT.TIP_PGE:
        case PT.TIP: {
          if (this.crossed()) {
            // perf yields after this state: pause before its TIP, walk to the FUP's IP again on resume
            rd.unread();
            this.st = FlowState.Fup;
            this.heldTsc = this.clock.timestamp;
            return Step.Pause;
          }
          this.st = FlowState.InSync;
          this.clock.refresh();
          const from = this.ip;
          if (rd.raw.ipc) this.setIp();
          this.stateDone(rd.raw.type === PT.TIP_PGE ? 0n : from, rd.raw.ipc ? this.ip : 0n);
          this.sink.event?.(this.cpu, 'interrupt', from, rd.lastOffset);
          this.sink.branch?.(this.cpu, from, this.ip, BranchKind.async, this.tsc);
          return Step.Ok;
        }
        default:
          rd.unread(); // not consumed (perf's pkt_step = 0)
          return this.fail(PtErr.MISMAT, 'Missing TIP after FUP', this.resync.missingPacket);
      }
    }
  }
}
