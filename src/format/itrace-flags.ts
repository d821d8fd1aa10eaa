/**
 * perf's sample flags for synthesized Intel PT samples (tools/perf/util/event.h
 * PERF_IP_FLAG_*, intel-pt.c intel_pt_sample_flags / intel_pt_insn_type) and
 * their text in perf script's `flags` column (builtin-script.c
 * perf_sample__sprintf_flags, perf_sample__fprintf_flags).
 */

export const IP_FLAG = {
  BRANCH: 1 << 0,
  CALL: 1 << 1,
  RETURN: 1 << 2,
  CONDITIONAL: 1 << 3,
  SYSCALLRET: 1 << 4,
  ASYNC: 1 << 5,
  INTERRUPT: 1 << 6,
  TX_ABORT: 1 << 7,
  TRACE_BEGIN: 1 << 8,
  TRACE_END: 1 << 9,
  IN_TX: 1 << 10,
  VMENTRY: 1 << 11,
  VMEXIT: 1 << 12,
  INTR_DISABLE: 1 << 13,
  INTR_TOGGLE: 1 << 14,
} as const;

const F = IP_FLAG;

/** intel_pt_insn_type: the flags of a branch instruction by its class (0 for other instructions). */
export function insnTypeFlags(op: string | undefined): number {
  switch (op) {
    case 'call':
      return F.BRANCH | F.CALL;
    case 'ret':
      return F.BRANCH | F.RETURN;
    case 'jcc':
    case 'loop':
      return F.BRANCH | F.CONDITIONAL;
    // far jumps: perf's instruction decoder has no class of their own for them
    case 'jmp':
    case 'far':
      return F.BRANCH;
    case 'iret':
      return F.BRANCH | F.RETURN | F.INTERRUPT;
    case 'int':
    case 'int3':
      return F.BRANCH | F.CALL | F.INTERRUPT;
    case 'syscall':
      return F.BRANCH | F.CALL | F.SYSCALLRET;
    case 'sysret':
      return F.BRANCH | F.RETURN | F.SYSCALLRET;
    default:
      return 0;
  }
}

/**
 * intel_pt_sample_flags for a branch the flow decoder reports: `kind` is its BranchKind, `op` the branch
 * instruction's class where the kind does not say it (indirect branches, trace ends).
 */
export function branchSampleFlags(kind: string, op: string | undefined, from: bigint, to: bigint): number {
  let f: number;
  if (kind === 'async') f = to === 0n ? F.BRANCH | F.TRACE_END : F.BRANCH | F.CALL | F.ASYNC | F.INTERRUPT;
  else if (from === 0n) f = F.BRANCH | F.TRACE_BEGIN;
  else f = insnTypeFlags(kind === 'call' || kind === 'ret' || kind === 'jmp' || kind === 'jcc' ? kind : op);
  // the decoder's INTEL_PT_TRACE_END state type: TIP.PGD (or a TIP without IP)
  if (to === 0n || kind === 'tr end') f |= F.TRACE_END;
  return f;
}

/** builtin-script.c sample_flags[]: flag combinations perf names. */
const NAMES: [number, string][] = [
  [F.BRANCH | F.CALL, 'call'],
  [F.BRANCH | F.RETURN, 'return'],
  [F.BRANCH | F.CONDITIONAL, 'jcc'],
  [F.BRANCH, 'jmp'],
  [F.BRANCH | F.CALL | F.INTERRUPT, 'int'],
  [F.BRANCH | F.RETURN | F.INTERRUPT, 'iret'],
  [F.BRANCH | F.CALL | F.SYSCALLRET, 'syscall'],
  [F.BRANCH | F.RETURN | F.SYSCALLRET, 'sysret'],
  [F.BRANCH | F.ASYNC, 'async'],
  [F.BRANCH | F.CALL | F.ASYNC | F.INTERRUPT, 'hw int'],
  [F.BRANCH | F.TX_ABORT, 'tx abrt'],
  [F.BRANCH | F.TRACE_BEGIN, 'tr strt'],
  [F.BRANCH | F.TRACE_END, 'tr end'],
  [F.BRANCH | F.CALL | F.VMENTRY, 'vmentry'],
  [F.BRANCH | F.CALL | F.VMEXIT, 'vmexit'],
];

const nameOf = (flags: number): string | undefined => NAMES.find(([f]) => f === flags)?.[1];

/** PERF_IP_FLAG_CHARS: one letter per flag bit when no name fits. */
const CHARS = 'bcrosyiABExghDt';

/** perf_sample__sprintf_flags. */
export function flagsText(flags: number): string {
  const xf = F.IN_TX | F.INTR_DISABLE | F.INTR_TOGGLE;
  const xs =
    flags & xf
      ? `(${flags & F.IN_TX ? 'x' : ''}${flags & F.INTR_DISABLE ? 'D' : ''}${flags & F.INTR_TOGGLE ? 't' : ''})`
      : '';
  let name = nameOf(flags & ~xf);
  if (name) return `${name.padEnd(15)}${xs.padStart(6)}`;
  if (flags & F.TRACE_BEGIN) {
    name = nameOf(flags & ~(xf | F.TRACE_BEGIN));
    if (name) return `tr strt ${name.padEnd(7)}${xs.padStart(6)}`;
  }
  if (flags & F.TRACE_END) {
    name = nameOf(flags & ~(xf | F.TRACE_END));
    if (name) return `tr end  ${name.padEnd(7)}${xs.padStart(6)}`;
  }
  let s = '';
  for (let i = 0; i < 32; i++) if ((flags >>> i) & 1) s += CHARS[i] ?? '?';
  return s;
}

/** perf_sample__fprintf_flags: the column as perf script prints it. */
export const flagsColumn = (flags: number): string => `  ${flagsText(flags).padEnd(21)} `;

/** The flags of a quick-decoding sample: its branch's, else a state with no branch (perf: trace end, no name). */
export function branchFlagsOf(branch: { kind: string; to: bigint } | undefined, ip: bigint): number {
  return branch ? branchSampleFlags(branch.kind, undefined, ip, branch.to) : 0;
}
