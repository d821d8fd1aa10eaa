/** perf_event_sample_format bits (attr.sample_type), uapi order. */
export const SampleType = {
  IP: 1n << 0n,
  TID: 1n << 1n,
  TIME: 1n << 2n,
  ADDR: 1n << 3n,
  READ: 1n << 4n,
  CALLCHAIN: 1n << 5n,
  ID: 1n << 6n,
  CPU: 1n << 7n,
  PERIOD: 1n << 8n,
  STREAM_ID: 1n << 9n,
  RAW: 1n << 10n,
  BRANCH_STACK: 1n << 11n,
  REGS_USER: 1n << 12n,
  STACK_USER: 1n << 13n,
  WEIGHT: 1n << 14n,
  DATA_SRC: 1n << 15n,
  IDENTIFIER: 1n << 16n,
  TRANSACTION: 1n << 17n,
  REGS_INTR: 1n << 18n,
  PHYS_ADDR: 1n << 19n,
  AUX: 1n << 20n,
  CGROUP: 1n << 21n,
  DATA_PAGE_SIZE: 1n << 22n,
  CODE_PAGE_SIZE: 1n << 23n,
  WEIGHT_STRUCT: 1n << 24n,
} as const;

/** perf_event_read_format bits (attr.read_format). */
export const ReadFormat = {
  TOTAL_TIME_ENABLED: 1n << 0n,
  TOTAL_TIME_RUNNING: 1n << 1n,
  ID: 1n << 2n,
  GROUP: 1n << 3n,
  LOST: 1n << 4n,
} as const;

/** perf_branch_sample_type bit that adds hw_idx to BRANCH_STACK. */
export const PERF_SAMPLE_BRANCH_HW_INDEX = 1n << 17n;

/** Callchain context markers (perf_callchain_context). */
export const PERF_CONTEXT_HV = BigInt.asUintN(64, -32n);
export const PERF_CONTEXT_KERNEL = BigInt.asUintN(64, -128n);
export const PERF_CONTEXT_USER = BigInt.asUintN(64, -512n);
export const PERF_CONTEXT_GUEST = BigInt.asUintN(64, -2048n);
export const PERF_CONTEXT_GUEST_KERNEL = BigInt.asUintN(64, -2176n);
export const PERF_CONTEXT_GUEST_USER = BigInt.asUintN(64, -2560n);
export const PERF_CONTEXT_MAX = BigInt.asUintN(64, -4095n);

export function hasBit(mask: bigint, bit: bigint): boolean {
  return (mask & bit) !== 0n;
}
