/**
 * The code-walking half of the flow decoder (perf's intel_pt_walk_insn and
 * the decoder state it keeps): from the current IP, run through the code
 * image block by block up to the next branch the trace must decide, reporting
 * executed instructions; follow direct jumps and calls on the way (with the
 * return stack for compressed returns and perf's never-ending-loop check).
 * It also holds error reporting (fail), since a walk can fail on its own.
 * CpuFlow (cpu-flow.ts) adds the packet-driven state machine on top.
 */
import type { Block, Insn } from '../../x86/block-cache.js';
import { linkedBlock } from './block-links.js';
import { cachedPattern } from './tnt-patterns.js';
import { flowError, PtErr, type PtErrCode, type ResyncStates } from './flow-errors.js';
import {
  BranchKind,
  FlowState,
  Step,
  WalkStop,
  type BlockSource,
  type FlowSink,
  type InsnClock,
} from './flow-types.js';
import type { PacketReader } from './packet-reader.js';
import { MEMO } from '../packets/last-ip.js';
import type { PerfClock } from './perf-clock.js';

/**
 * Unconditional branches walked in a row (no packet consumed) before a
 * never-ending-loop error. perf's INTEL_PT_MAX_LOOPS is 10000 in current
 * sources; the stuck-IP check in loopCheck() usually stops a real loop first.
 */
const MAX_LOOPS = 100000;

export class FlowWalker {
  st: FlowState = FlowState.NoPsb;
  /** The decoder's IP: where execution is, as far as the trace has told. */
  ip = 0n;
  errors = 0;
  /** Instructions reported to the sink. */
  insnCount = 0;
  /** Is tracing enabled (perf's pge)? */
  protected pge = false;
  /**
   * The blocks of the calls walked (a call ends its block: the return address is the block's end), for
   * compressed returns; a return then walks on through the call block's fall-through link (block-links.ts).
   */
  protected readonly stack: Block[] = [];
  /** The address the last return walked to pops off the stack (0 when it was empty). */
  protected retAddr = 0n;
  /** The call block retAddr came from (undefined when the stack was empty). */
  protected retBlock: Block | undefined;
  /** The branch instruction the last walk stopped at. */
  protected lastInsn: Insn | undefined;
  /** The class of the last instruction walked (perf's state.insn_op, which power samples take their flags from). */
  walkOp: string | undefined;
  /** The block lastInsn ends. */
  protected lastBlock: Block | undefined;
  /** The block whose branch set this.ip (taken or not: linkTaken), for the next walk's block (block-links.ts). */
  protected linkFrom: Block | undefined;
  protected linkTaken = false;
  /** The block at this.ip, looked up by replayTnt for the walk that follows it at once (else undefined). */
  private ipBlock: Block | undefined;
  /**
   * Blocks at recent IPs given by packets (TIP targets mostly), by the last IP's memo entry (LastIp.slot), valid
   * in the cache's epoch `packetEpoch`: a recurring target needs no lookup by bigint address.
   */
  private readonly packetBlocks: (Block | undefined)[] = new Array<Block | undefined>(MEMO).fill(undefined);
  private packetEpoch = -1;
  /** The block whose last instruction (the branch a walk stopped at) is not reported yet. */
  protected pending: readonly Insn[] | undefined;
  /**
   * perf's queue timestamp after an error: the error's estimated TSC, until a
   * TSC packet passes it (intel-pt.c sets ptq->timestamp = est_timestamp and
   * raises it only with a later state's larger timestamp). Undefined when none.
   */
  protected errTsc: bigint | undefined;
  /**
   * After a PSB+ that gave no IP, before anything else: perf 6.1 reads power-event packets there as
   * states (measured: PWRE/EXSTOP/PWRX samples with IP 0), as it does not after an error.
   */
  protected afterSync = false;
  /**
   * Set by the sink during a branch report when perf's sync_switch takes the queue off the heap there
   * (sync-switch.ts): the decoder stops right after that branch; the driver clears it.
   */
  switchPause = false;
  /** perf's quick decoding level (CpuFlow's `quick` option), which changes what sync reports. */
  protected quickSync = 0;

  /** perf's ptq->timestamp set from outside (a queue put back on the heap at a switch record's time). */
  setQueueTime(tsc: bigint): void {
    this.errTsc = tsc;
  }

  /** perf's state est_timestamp now. */
  estimatedTsc(): bigint {
    return this.estTsc();
  }

  /**
   * The time of the decoder state being reported (perf's sample_timestamp, from TSC, MTC and CYC packets: the
   * clock's); 0 before any.
   */
  get tsc(): bigint {
    return this.clock.sample;
  }

  /** perf's decoder cbr: the last CBR packet's ratio (0 before any). */
  protected get cbr(): number {
    return this.clock.cbr;
  }

  /** perf's intel_pt_est_timestamp: the state's time plus 2 ticks per instruction since (PerfClock.estimate). */
  protected estTsc(): bigint {
    return this.clock.estimate();
  }
  private noProgress = 0;
  private stuckIp = 0n;
  private stuckPrd = 0;
  private stuckCnt = 0;

  constructor(
    readonly cpu: number,
    protected readonly reader: PacketReader,
    protected readonly blocks: BlockSource,
    protected readonly sink: FlowSink,
    protected readonly resync: ResyncStates,
    /** Timestamps, instruction counts since them, and estimates, as perf's decoder keeps them. */
    readonly clock: PerfClock,
  ) {}

  /** Report an error (perf's codes), move to the state decoding resumes in. */
  protected fail(code: PtErrCode, reason: string, next: FlowState): Step {
    const dropped = this.pending !== undefined;
    this.afterSync = false;
    this.pending = undefined;
    this.st = next;
    this.errors++;
    // perf samples the time at every error (no state: the queue's time becomes the estimate, errTsc; hop mode
    // yields at any packet, the error's time counted)
    if (this.quickSync) this.clock.refresh();
    else this.clock.refreshQuiet();
    const e = flowError(this.cpu, code, reason, {
      ip: this.ip,
      tsc: this.tsc,
      estTsc: this.estTsc(),
      offset: this.reader.lastOffset,
    });
    if (dropped) e.droppedBranch = true;
    this.errTsc = e.estTsc;
    this.sink.error?.(e);
    return Step.Error;
  }

  /**
   * Walk from this.ip to the next branch that needs the trace, reporting the
   * instructions executed, or to `toIp` when it is not 0. At a conditional or
   * indirect branch, this.ip and this.lastInsn are that branch, not reported
   * yet (commit() reports it once the trace confirms it).
   */
  protected walkInsn(toIp: bigint): WalkStop {
    for (;;) {
      if (toIp && this.ip === toIp) {
        this.walkOp = undefined;
        return WalkStop.Reached;
      }
      const b = this.ipBlock ?? this.nextBlock();
      this.ipBlock = undefined;
      this.linkFrom = undefined;
      const insns = b.insns;
      const n = insns.length;
      if (toIp && toIp > b.start && toIp < b.end) {
        let upto = n;
        for (let i = 0; i < n; i++) {
          if (insns[i]!.ip === toIp) {
            upto = i;
            break;
          }
        }
        if (upto < n) {
          this.walkOp = upto > 0 ? insns[upto - 1]!.op : undefined;
          if (upto > 0 && this.emit(insns, 0, upto, true, true) < upto) return WalkStop.Paused;
          this.ip = toIp;
          this.noProgress = 0;
          return WalkStop.Reached;
        }
      }
      if (b.stop !== 'branch') {
        if (n && this.emit(insns, 0, n, true) < n) return WalkStop.Paused;
        this.ip = b.end;
        if (b.stop === 'limit') {
          this.linkFrom = b;
          this.linkTaken = false;
          continue;
        }
        this.noProgress = 0;
        this.fail(PtErr.NOINSN, 'Failed to get instruction', this.resync.unreadableCode);
        return WalkStop.Error;
      }
      const last = insns[n - 1]!;
      // perf yields at an instruction sample before the branch as at any state
      if (n > 1 && this.emit(insns, 0, n - 1, true) < n - 1) return WalkStop.Paused;
      this.ip = last.ip;
      this.lastInsn = last;
      this.walkOp = last.op;
      this.lastBlock = b;
      // The branch itself is reported only once the trace confirms it
      // (perf synthesizes no instruction sample for a branch that errors).
      this.pending = insns;
      this.clock.count(1);
      switch (last.op) {
        case 'jcc':
          this.noProgress = 0;
          return WalkStop.Conditional;
        case 'jmp':
        case 'call':
          if (!last.indirect) {
            if (this.holdState(this.clock.sample)) {
              // perf yields after this branch's state: walk to it again on resume
              this.pending = undefined;
              this.clock.count(-1);
              return WalkStop.Paused;
            }
            this.commit();
            // a call to the next instruction (getting the IP) pushes nothing, as in perf
            if (last.op === 'call' && last.target !== b.end) this.stack.push(b);
            const from = last.ip;
            this.ip = last.target!;
            this.linkFrom = b;
            this.linkTaken = true;
            const kind = last.op === 'call' ? BranchKind.call : BranchKind.jmp;
            this.sink.branch?.(this.cpu, from, this.ip, kind, this.tsc);
            if (this.loopCheck()) return WalkStop.Error;
            if (this.switchPause) return WalkStop.Paused;
            continue;
          }
          if (last.op === 'call') this.stack.push(b);
          this.noProgress = 0;
          return WalkStop.Indirect;
        case 'ret':
          this.retBlock = this.stack.pop();
          this.retAddr = this.retBlock?.end ?? 0n;
          this.noProgress = 0;
          return WalkStop.Indirect;
        default:
          this.noProgress = 0;
          return WalkStop.Indirect;
      }
    }
  }

  /**
   * Walk the next run of TNT bits (`k` of them, the first highest in `bits`) through its TNT pattern
   * (tnt-patterns.ts) when the sink wants no branch reports; returns the bits taken (0: walk them one by one).
   * The state left is the walk's after the same bits: instructions and the clock counted, the return stack,
   * the IP and link after the last conditional branch.
   */
  protected replayTnt(bits: number, k: number): number {
    const epoch = this.blocks.epoch;
    // a chain of direct jumps walked before counts towards the loop check: the walk goes on with it
    if (epoch === undefined || this.noProgress !== 0) return 0;
    const start = this.nextBlock();
    const p = cachedPattern(this.blocks, epoch, start, bits, k);
    const last = p.last;
    if (last === undefined) {
      this.ipBlock = start;
      return 0;
    }
    const br = last.insns[last.insns.length - 1]!;
    let ret = p.ret;
    if (br.op === 'ret' && ret === undefined) {
      // it returns to a call from before the pattern: with none on the stack, the walk reports the error
      if (!this.stack.length) {
        this.ipBlock = start;
        return 0;
      }
      ret = this.stack.pop()!;
    }
    this.insnCount += p.insns;
    const c = this.clock;
    c.count(p.insns);
    // every branch taking a bit samples the time; a taken one (or a return) is a state reported
    if (p.anyTaken) c.refresh();
    else c.refreshQuiet();
    if (p.calls) for (const b of p.calls) this.stack.push(b);
    this.lastInsn = br;
    this.walkOp = br.op;
    this.lastBlock = last;
    this.pending = undefined;
    if (br.op === 'ret') {
      this.retBlock = ret;
      this.retAddr = ret!.end;
      this.linkFrom = ret;
      this.linkTaken = false;
      this.ip = ret!.end;
    } else {
      this.linkFrom = last;
      this.linkTaken = p.taken;
      this.ip = p.taken ? br.target! : last.end;
    }
    return p.bits;
  }

  /** The block at this.ip: through the link of the branch that led there, or the block of a packet's IP. */
  private nextBlock(): Block {
    const ip = this.ip;
    if (this.linkFrom !== undefined) return linkedBlock(this.blocks, this.linkFrom, this.linkTaken, ip);
    const last = this.reader.last;
    const epoch = this.blocks.epoch;
    if (epoch === undefined || ip !== last.ip) return this.blocks.get(ip);
    if (epoch !== this.packetEpoch) {
      this.packetBlocks.fill(undefined);
      this.packetEpoch = epoch;
    }
    const k = last.slot;
    let b = this.packetBlocks[k];
    if (b === undefined || b.start !== ip) {
      b = this.blocks.get(ip);
      this.packetBlocks[k] = b;
    }
    return b;
  }

  /**
   * A state timed `tsc` is next: does perf yield after it (its time reaches the stop)? Then run() pauses
   * before reporting it (FlowSync knows the stop).
   */
  protected holdState(_tsc: bigint): boolean {
    return false;
  }

  /** perf's stuck-IP detector for chains of unconditional branches; true when it reported an error. */
  private loopCheck(): boolean {
    const cnt = this.noProgress++;
    if (cnt) {
      if (cnt === 1) {
        this.stuckIp = this.ip;
        this.stuckPrd = 1;
        this.stuckCnt = 1;
      } else if (cnt > MAX_LOOPS || this.ip === this.stuckIp) {
        this.fail(PtErr.NELOOP, 'Never-ending loop', FlowState.ErrResync);
        return true;
      } else if (!--this.stuckCnt) {
        this.stuckPrd += 1;
        this.stuckCnt = this.stuckPrd;
        this.stuckIp = this.ip;
      }
    }
    return false;
  }

  /**
   * Report the branch instruction the last walk stopped at. `hold`: it may be an instruction sample state perf
   * yields at (a not-taken branch): then it stays pending (true), and the walk is to reach it again on resume.
   */
  protected commit(hold = false): boolean {
    const p = this.pending;
    if (!p) return false;
    this.pending = undefined;
    this.clock.count(-1);
    if (this.emit(p, p.length - 1, p.length, hold) === p.length) return false;
    this.pending = p;
    return true;
  }

  /**
   * Report insns[from..to) executed. Returns `to`, or the index of an instruction sample perf yields at (the
   * sink stopped before it: the walk pauses with this.ip there).
   */
  protected emit(insns: readonly Insn[], from: number, to: number, hold = false, end = false): number {
    this.insnCount += to - from;
    const c = this.clock;
    const report = this.sink.insns;
    // no instruction sink (e.g. --itrace=e): count, and make no InsnClock per block
    if (report === undefined) {
      c.count(to - from);
      return to;
    }
    const at: InsnClock = { ts: c.timestamp, cnt: c.insnCnt };
    if (hold) at.hold = (t) => this.holdState(t);
    if (end) at.end = true;
    c.count(to - from);
    const r = report.call(this.sink, this.cpu, insns, from, to, this.tsc, at);
    if (typeof r !== 'number' || r >= to) return to;
    this.insnCount -= to - r;
    c.count(r - to);
    this.ip = insns[r]!.ip;
    return r;
  }
}
