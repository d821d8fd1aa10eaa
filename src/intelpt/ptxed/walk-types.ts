/**
 * What the instruction walk (insn-walk.ts) reports to, its options, and where it resumes after a disable:
 * ptxed's lines come from a PtxedSink (src/format/ptxed.ts, block-walk.ts).
 */
import type { Insn } from '../../x86/block-cache.js';
import type { Errata } from '../cpu.js';
import type { TimingConfig } from '../timing.js';
import type { AddrFilter } from './addr-filter.js';
import type { ExecMode, PtErrorCode, PtEvent } from './event-types.js';

/** "error" while decoding, "sync error" while looking for a PSB, "resync error" when --resync-on-error fails. */
export type PtxedErrorKind = 'error' | 'sync error' | 'resync error';

export interface PtxedSink {
  /**
   * `time`: the decoder's time when the instruction was reached (ptxed --time);
   * `at`: the event pending (a TNT/TIP or one to reach) and the execution mode (block-walk.ts uses them),
   * and the decoder's trace offset before the instruction (ptxed --offset).
   */
  insn(
    ip: bigint,
    speculative: boolean,
    insn: Insn,
    time: bigint,
    at?: { pending: PtEvent | undefined; mode: ExecMode; offset: number },
  ): void;
  /** `offset`: the decoder's trace offset when the event is delivered (ptxed --offset). */
  event(ev: PtEvent, offset?: number): void;
  error(offset: number, ip: bigint, code: PtErrorCode, kind: PtxedErrorKind): void;
  /** The trace ended with tracing enabled (ptxed prints `[end of trace]`). */
  end?(): void;
  /** A status update (PSB+) was applied: not printed, but libipt's decoders deliver it between blocks. */
  status?(ev: PtEvent, offset?: number): void;
}

export interface PtxedDecodeOptions {
  errata: Errata;
  timing: TimingConfig;
  iflags?: boolean;
  /** The address filter configuration (ptxed --filter:addrN_*), for SKL014. */
  filter?: AddrFilter;
  /** Keep the timing calibration across an overflow (ptxed --insn:keep-tcal-on-ovf). */
  keepTcalOnOvf?: boolean;
  /** Synthesize tick events (ptxed --event:tick). */
  tick?: boolean;
  /** Returns may be compressed into TNT bits (default true). */
  retCompression?: boolean;
  /**
   * After an error go on at the event that failed (ptxed --resync-on-error:
   * pt_insn_resync / pt_blk_resync) rather than at the next PSB.
   */
  resyncOnError?: boolean;
}

export interface PtxedResult {
  instructions: number;
  errors: number;
}

/**
 * Where libipt expects tracing to resume after a TIP.PGD at a branch that
 * needed trace (pt_blk_set_disable_resume_ip): after a call, else nowhere.
 */
export function resumeAfter(insn: Insn, next: bigint): bigint {
  return insn.op === 'call' || insn.op === 'syscall' || insn.op === 'int' || insn.op === 'int3' ? next : 0n;
}

/** Events without an IP, reported as soon as they are reached. */
export const STANDALONE: ReadonlySet<string> = new Set(['cbr', 'pwre', 'pwrx', 'mnt', 'stop']);
