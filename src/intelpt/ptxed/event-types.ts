/**
 * The events of libipt's event decoder (struct pt_event, enum pt_event_type
 * in intel-pt.h, libipt 2.3): what the ptxed view prints between
 * instructions. One flat shape; each type uses the fields its comment names.
 */

export type PtEventType =
  | 'enabled' // ip; resumed
  | 'disabled' // ip (suppressed when unknown)
  | 'async_disabled' // at (from), ip
  | 'async_branch' // from, ip (= to)
  | 'paging' // cr3, nr
  | 'async_paging' // cr3, nr, ip
  | 'overflow' // ip
  | 'exec_mode' // mode, ip
  | 'tsx' // speculative, aborted, ip
  | 'stop'
  | 'vmcs' // base
  | 'async_vmcs' // base, ip
  | 'exstop' // ip
  | 'mwait' // hints, ext, ip
  | 'pwre' // state, subState, hw
  | 'pwrx' // last, deepest, interrupt, store, autonomous
  | 'ptwrite' // payload, ip
  | 'tick' // ip
  | 'cbr' // ratio
  | 'mnt' // payload
  | 'tip' // ip (internal: an indirect branch target)
  | 'tnt' // bits, size (internal: conditional branch outcomes)
  | 'iflags' // iflag, ip
  | 'trig' // trbv, mult, icnt, ip
  | 'interrupt' // vector, cr2, ip (event tracing: CFE/EVD)
  | 'iret' // ip
  | 'smi' // ip
  | 'rsm'
  | 'sipi' // vector
  | 'init' // ip
  | 'vmentry' // ip
  | 'vmexit' // vector (hasVector), vmxr, vmxq, ip
  | 'shutdown' // ip
  | 'uintr' // vector, ip
  | 'uiret' // ip
  | 'swintr' // vector, ip
  | 'syscall' // ip
  | 'ignore'; // internal: a MODE.Exec that changed nothing, dropped at its binding packet

export type ExecMode = 'unknown' | '16-bit' | '32-bit' | '64-bit';

export interface PtEvent {
  type: PtEventType;
  /** The event's IP is not known (libipt ip_suppressed). */
  ipSuppressed: boolean;
  /** A PSB+ status update: state to check, not printed by ptxed. */
  statusUpdate: boolean;
  /** The time of the event, when the trace gave one (has_tsc). */
  tsc?: bigint;
  ip: bigint;
  /** async_branch.from, async_disabled.at. */
  from: bigint;
  resumed?: boolean;
  /** A TIP.PGD applied before the instruction at its IP (the walk got there), not after a branch. */
  beforeInsn?: boolean;
  mode?: ExecMode;
  cr3?: bigint;
  nr?: boolean;
  base?: bigint;
  payload?: bigint;
  hints?: number;
  ext?: number;
  state?: number;
  subState?: number;
  hw?: boolean;
  last?: number;
  deepest?: number;
  interrupt?: boolean;
  store?: boolean;
  autonomous?: boolean;
  speculative?: boolean;
  aborted?: boolean;
  ratio?: number;
  /** tnt: outcomes, bit size-1 first (1 = taken). */
  bits?: number;
  size?: number;
  iflag?: boolean;
  trbv?: number;
  mult?: boolean;
  icnt?: number;
  vector?: number;
  hasVector?: boolean;
  cr2?: bigint;
  vmxr?: bigint;
  vmxq?: bigint;
}

export function newEvent(type: PtEventType): PtEvent {
  return { type, ipSuppressed: false, statusUpdate: false, ip: 0n, from: 0n };
}

/** libipt error codes the ptxed view reports, with pt_errstr's text. */
export const PTXED_ERRSTR = {
  internal: 'internal error',
  nosync: 'decoder out of sync',
  bad_opc: 'unknown opcode',
  bad_packet: 'unknown packet',
  bad_context: 'unexpected packet context',
  eos: 'reached end of trace stream',
  bad_query: 'trace stream does not match query',
  nomap: 'no memory mapped at this address',
  bad_insn: 'unknown instruction',
  noip: 'no ip',
  bad_status_update: 'bad status update',
  retstack_empty: 'compressed return without call',
  bad_retcomp: 'bad compressed return',
  no_enable: 'expected tracing enabled event',
  bad_cpu: 'unknown cpu',
  bad_config: 'bad configuration',
  no_time: 'no timing information',
} as const;
export type PtErrorCode = keyof typeof PTXED_ERRSTR;

/** A libipt error (-pte_*) raised by the decoders; the walker reports it and resynchronizes. */
export class PtDecodeError extends Error {
  constructor(readonly code: PtErrorCode) {
    super(PTXED_ERRSTR[code]);
  }
}
