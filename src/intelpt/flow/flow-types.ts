/**
 * The flow decoder's vocabulary: its states, the results its steps return,
 * and what it reports to its caller (FlowSink).
 */
import type { Block, Insn } from '../../x86/block-cache.js';

/** perf's intel_pt_pkt_state values that this decoder has (intel-pt-decoder.c: INTEL_PT_STATE_NO_PSB …). */
export enum FlowState {
  /** Scan to a PSB, read PSB+ (TSC, MODE, FUP); → InSync if that gave an IP. */
  NoPsb,
  /** Forget the last IP, then as ErrResync. */
  NoIp,
  /** Skip to the next packet that gives an IP (TIP, TIP.PGE, TIP.PGD, FUP, PSB+ with FUP). */
  ErrResync,
  /** Read packets and walk the code they describe. */
  InSync,
  /** Walking conditional branches (and compressed returns) against a TNT packet's bits. */
  Tnt,
  /** Walking to the indirect branch a TIP names the target of. */
  Tip,
  /** As Tip, for a TIP.PGD: tracing stops at that branch. */
  TipPgd,
  /** Walking to a FUP's IP; then the TIP (or TIP.PGD) that must follow. */
  Fup,
}

/**
 * What a step of the decoder returns (perf's return codes):
 * - Ok: the step is done; the run loop continues in the state it left;
 * - Again: perf's -EAGAIN, the step's work continues in the caller (a TNT
 *   packet used up on a not-taken branch: read the next packet; a FUP's IP
 *   reached: the TIP after it comes next);
 * - Pause: stopped before a timing point at or after the stop TSC;
 * - End: the trace ended;
 * - Error: an error was reported and the state set to where decoding resumes.
 */
export enum Step {
  Ok,
  Again,
  Pause,
  End,
  Error,
}

/**
 * Where a code walk stopped: at a conditional branch, at an indirect branch
 * (or a return: both need the trace to go on), at the IP it was asked to reach
 * (not executed), or at an error already reported.
 */
export enum WalkStop {
  Conditional,
  Indirect,
  Reached,
  Error,
  /** After a branch perf's sync_switch stops the queue at (sync-switch.ts): the walk resumes from its target. */
  Paused,
}

export const BranchKind = {
  cond: 'jcc',
  jmp: 'jmp',
  call: 'call',
  ret: 'ret',
  indirect: 'ind',
  traceBegin: 'tr strt',
  traceEnd: 'tr end',
  async: 'async',
} as const;

export interface FlowError {
  cpu: number;
  code: number;
  message: string;
  /** Decoder IP at the error (0 when unknown). */
  ip: bigint;
  /** Last TSC seen (0 when none). */
  tsc: bigint;
  /** perf's est_timestamp: last TSC + 2 ticks per instruction walked since it (matches perf 6.1 on simulated files). */
  estTsc: bigint;
  /** Offset of the packet last read when the error was found, in this CPU's trace (-1 before any). */
  offset: number;
  /** What went wrong, in perf's debug-log words. */
  reason: string;
  /** The branch instruction the error was found at was walked (perf counts it) but not reported. */
  droppedBranch?: boolean;
}

/**
 * A power-event decoder state perf synthesizes a sample for (itrace `p`): a PSB+ read (its offset in the
 * CPU's trace), a core-to-bus ratio not reported yet (CBR; the queue's first state reports the ratio
 * even when no CBR came, as perf does), and MWAIT / PWRE / EXSTOP / PWRX packets. `ip` is the state's
 * from_ip (0 when none), `to` its to_ip (perf prints it as `addr`; 0 when absent), `tsc` the state's
 * timestamp, `op` the class of the last instruction walked.
 */
export type PowerEvent = { op?: string | undefined; to?: bigint } & PowerPayload;

type PowerPayload =
  | { kind: 'psb'; ip: bigint; tsc: bigint; offset: number }
  | { kind: 'cbr'; ip: bigint; tsc: bigint; cbr: number }
  | { kind: 'mwait'; ip: bigint; tsc: bigint; hints: number; ext: number }
  | { kind: 'pwre'; ip: bigint; tsc: bigint; hw: boolean; cstate: number; subcstate: number }
  | { kind: 'exstop'; ip: bigint; tsc: bigint; ipBit: boolean }
  | { kind: 'pwrx'; ip: bigint; tsc: bigint; deepest: number; last: number; wake: number };

export type FlowEvent = 'enabled' | 'disabled' | 'overflow' | 'interrupt' | 'exec-mode-64' | 'psb';

export interface FlowSink {
  /**
   * Instructions insns[from..to) of a block were executed; `tsc` is the time of their decoder state, `clock`
   * the decoder's timestamp and the instructions counted since it before insns[from] (perf's timestamp and
   * timestamp_insn_cnt, which time-based instruction periods count in). A sink that samples instructions may
   * stop at the sample insns[i] when `clock.hold` says perf yields at its state: it returns i, and the decoder
   * pauses there and reports insns[i..) again on resume.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a sink that never stops returns nothing
  insns?(cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint, clock?: InsnClock): number | void;
  /** A taken branch; `op`: the branch instruction's class where `kind` does not say it (indirect, trace end). */
  branch?(cpu: number, from: bigint, to: bigint, kind: string, tsc: bigint, op?: string): void;
  error?(e: FlowError): void;
  /**
   * Quick decoding (`q`): an instruction sample at `ip`, where perf's hop mode takes one from a TIP, FUP or
   * PSB+ without walking code; `branch` when the sample's state is also that branch (a FUP's asynchronous one).
   */
  quick?(cpu: number, ip: bigint, tsc: bigint, branch?: { kind: string; to: bigint }): void;
  /** Events for ptxed-style output; `offset` is the packet's in the CPU's trace. */
  event?(cpu: number, what: FlowEvent, ip: bigint, offset: number): void;
  /** A power-event state (perf's itrace `p` samples). */
  power?(cpu: number, e: PowerEvent): void;
  /**
   * The sink does nothing with the branches a walk decides by itself or by TNT bits (conditional branches,
   * direct jumps and calls, compressed returns) and has no `insns`: the walker may replay runs of TNT bits
   * without reporting them (tnt-patterns.ts). Its branch() still sees every other branch.
   */
  walkQuiet?: boolean;
  /** The decoding ended: print what is still held. */
  flush?(): void;
  /** perf set the queue's timestamp (ptq->timestamp): later samples carry it until a later TSC passes it. */
  queueTime?(cpu: number, tsc: bigint): void;
}

/** The decoder's timestamp and the instructions walked since it (FlowSink.insns). */
export interface InsnClock {
  ts: bigint;
  cnt: number;
  /** Does perf's queue yield at an instruction sample state of time `tsc` (before its sample)? */
  hold?: (tsc: bigint) => boolean;
  /** The last instruction ends perf's walk (a FUP's IP reached): the next walk counts to its sample afresh. */
  end?: boolean;
}

export interface BlockSource {
  get(start: bigint): Block;
  /** Moves whenever a block is dropped (BlockCache); absent: blocks are never linked (block-links.ts). */
  readonly epoch?: number;
}
