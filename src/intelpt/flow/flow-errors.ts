/**
 * Error reporting of the flow decoder: perf's error codes and messages, the
 * FlowError handed to the sink, and the typed choice of where decoding
 * resumes after the errors whose resync point depends on how perf was built.
 */
import { FlowState, type FlowError } from './flow-types.js';

/** perf's INTEL_PT_ERR_* codes as printed after "code". */
export const PtErr = {
  NOMEM: 1,
  INTERN: 2,
  BADPKT: 3,
  NODATA: 4,
  NOINSN: 5,
  MISMAT: 6,
  OVR: 7,
  LOST: 8,
  UNK: 9,
  NELOOP: 10,
} as const;

export type PtErrCode = (typeof PtErr)[keyof typeof PtErr];

export const PT_ERR_MESSAGES: Record<number, string> = {
  1: 'Memory allocation failed',
  2: 'Internal error',
  3: 'Bad packet',
  4: 'No more data',
  5: 'Failed to get instruction',
  6: "Trace doesn't match instruction",
  7: 'Overflow packet',
  8: 'Lost trace data',
  9: 'Unknown error!',
  10: 'Never-ending loop',
};

/**
 * Where decoding resumes after the errors perf's decoder sends to its
 * INTEL_PT_STATE_ERR2 / ERR3 aliases (intel-pt-decoder.c): the aliases name
 * other states, and which ones depends on whether perf was built with
 * INTEL_PT_STRICT (then both are NO_PSB).
 */
export interface FlowErrorOptions {
  /**
   * After code that cannot be read (error 5, perf's ERR2):
   * - 'next-ip' (default, this decoder's behaviour so far): keep the last IP, resume at the next
   *   packet that gives an IP (ERR_RESYNC);
   * - 'forget-ip': forget the last IP first (NO_IP): perf 6.1 as built by Debian, which gives the
   *   same errors as this (test/flow-resync.test.ts);
   * - 'next-psb': resume at the next PSB (NO_PSB, a strict build).
   */
  afterUnreadableCode?: 'next-ip' | 'forget-ip' | 'next-psb';
  /**
   * After a bad return compression, a missing deferred TIP or a missing TIP
   * after a FUP (error 6, perf's ERR3): 'next-ip' (default: ERR_RESYNC, as a
   * non-strict perf) or 'next-psb' (NO_PSB, a strict build).
   */
  afterMissingPacket?: 'next-ip' | 'next-psb';
}

/** The states FlowErrorOptions resolve to. */
export interface ResyncStates {
  unreadableCode: FlowState;
  missingPacket: FlowState;
}

export function resyncStates(o: FlowErrorOptions = {}): ResyncStates {
  const code = o.afterUnreadableCode ?? 'next-ip';
  return {
    unreadableCode: code === 'next-psb' ? FlowState.NoPsb : code === 'forget-ip' ? FlowState.NoIp : FlowState.ErrResync,
    missingPacket: o.afterMissingPacket === 'next-psb' ? FlowState.NoPsb : FlowState.ErrResync,
  };
}

/** The FlowError for an error found at the decoder's state. */
export function flowError(
  cpu: number,
  code: PtErrCode,
  reason: string,
  at: { ip: bigint; tsc: bigint; estTsc: bigint; offset: number },
): FlowError {
  return {
    cpu,
    code,
    message: PT_ERR_MESSAGES[code] ?? 'Unknown error!',
    ip: at.ip,
    tsc: at.tsc,
    estTsc: at.estTsc,
    offset: at.offset,
    reason,
  };
}
