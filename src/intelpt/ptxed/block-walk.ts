/**
 * libipt 2.3's block decoder (pt_blk_next) over the instruction flow of
 * insn-walk.ts: the same instructions and events, grouped into the blocks
 * `ptxed --block-decoder` reports. A block is what one pt_blk_next call
 * walks:
 * - with a TNT or TIP pending (no event to reach), the walk without trace
 *   that block-cache-model.ts plans: up to a branch that needs trace, or a
 *   stop the block cache makes;
 * - with another event pending, the walk to where it binds (pt_blk_proceed_event),
 *   which also ends after a direct call or jump with end-on-call/-jump and
 *   before an instruction of another section;
 * and every event, error or end of trace is reported between blocks.
 */
import type { Insn } from '../../x86/block-cache.js';
import { BlockCacheModel, type BlockFlags, type BlockPlan, type CodeView } from './block-cache-model.js';
import { type ExecMode, PtDecodeError, type PtErrorCode, type PtEvent } from './event-types.js';
import type { PtxedErrorKind, PtxedSink } from './insn-walk.js';

export interface BlockInsn {
  ip: bigint;
  speculative: boolean;
  /** The decoder's time there (ptxed --time; it moves only at events, which end blocks). */
  time: bigint;
  /** The decoder's trace offset before it (ptxed --offset prints the block's first). */
  offset: number;
}

export interface PtxedBlockSink {
  /** One block (empty only before a TIP.PGD at its IP); `index` counts blocks from 1, as ptxed's --stat does. */
  block(insns: readonly BlockInsn[], index: number): void;
  event(ev: PtEvent, offset?: number): void;
  error(offset: number, ip: bigint, code: PtErrorCode, kind: PtxedErrorKind): void;
  end?(): void;
  /** A status update (not printed) ended the block: the trace offset then. */
  status?(offset?: number): void;
}

interface OpenBlock {
  insns: BlockInsn[];
  section: number | undefined;
  /** Set when the block was started with a TNT/TIP pending: where the walk without events ends. */
  plan?: BlockPlan;
}

/** The IP libipt walks to for an event (pt_blk_proceed_event with pt_blk_proceed_to_ip), if any. */
function eventIp(ev: PtEvent | undefined): bigint | undefined {
  if (!ev || ev.ipSuppressed) return undefined;
  switch (ev.type) {
    case 'async_branch':
    case 'async_disabled':
      return ev.from;
    case 'paging':
    case 'vmcs':
      // bound to the next MOV CR3 / VMPTRLD (pt_blk_proceed_to_insn)
      return undefined;
    default:
      return ev.ip;
  }
}

/** A PtxedSink that groups the flow into blocks for `out`; `blocks`/`instructions` count them. */
export class BlockGrouping implements PtxedSink {
  blocks = 0;
  instructions = 0;
  private open: OpenBlock | undefined;
  private failNext = false;
  private readonly cache: BlockCacheModel;

  constructor(
    private readonly out: PtxedBlockSink,
    private readonly code: CodeView,
    private readonly flags: BlockFlags,
  ) {
    this.cache = new BlockCacheModel(code, flags);
  }

  insn(
    ip: bigint,
    speculative: boolean,
    insn: Insn,
    time: bigint,
    at?: { pending: PtEvent | undefined; mode: ExecMode; offset: number },
  ): void {
    const section = this.code.section(ip);
    if (this.open && !this.open.plan && this.open.insns.length > 0 && this.open.section !== section) this.flush();
    let b = this.open;
    // the block before stopped where the cache fill met an entry of another mode: libipt fails there
    if (this.failNext && !b) throw new PtDecodeError('internal');
    this.failNext = false;
    if (!b) {
      b = { insns: [], section };
      const t = at?.pending?.type;
      if (t === 'tnt' || t === 'tip') b.plan = this.cache.plan(ip, at?.mode ?? 'unknown');
      this.open = b;
    }
    b.insns.push({ ip, speculative, time, offset: at?.offset ?? 0 });
    if (b.plan) {
      this.failNext = b.plan.stop === 'internal' && b.insns.length >= b.plan.n;
      if (b.insns.length >= b.plan.n) this.flush();
      return;
    }
    // end-on-call/-jump: unless the branch reached the event's IP (pt_blk_proceed_to_ip)
    if (this.endsOnFlag(insn) && (insn.target === undefined || insn.target !== eventIp(at?.pending))) this.flush();
  }

  event(ev: PtEvent, offset?: number): void {
    // pt_blk_next called where a TIP.PGD binds at once returns an empty block before it
    if (ev.beforeInsn && !this.open) this.out.block([], ++this.blocks);
    this.flush();
    this.out.event(ev, offset);
  }

  status(_ev: PtEvent, offset?: number): void {
    this.flush();
    this.out.status?.(offset);
  }

  error(offset: number, ip: bigint, code: PtErrorCode, kind: PtxedErrorKind): void {
    this.failNext = false;
    this.flush();
    this.out.error(offset, ip, code, kind);
  }

  end(): void {
    this.flush();
    this.out.end?.();
  }

  /** Report the block walked so far (the end of a pt_blk_next call). */
  flush(): void {
    const b = this.open;
    this.open = undefined;
    if (!b?.insns.length) return;
    this.blocks++;
    this.instructions += b.insns.length;
    this.out.block(b.insns, this.blocks);
  }

  private endsOnFlag(i: Insn): boolean {
    if (i.indirect) return false;
    return (this.flags.endOnCall && i.op === 'call') || (this.flags.endOnJump && i.op === 'jmp');
  }
}
