/**
 * PERF_RECORD_* ids, uapi spelling (include/uapi/linux/perf_event.h, enum
 * perf_event_type) and perf's user types (tools/lib/perf/include/perf/event.h,
 * enum perf_user_event_type). Ids stay plain numbers: newer kernels add types,
 * and an unknown id must be carried, never rejected.
 */
export const RecordType = {
  MMAP: 1,
  LOST: 2,
  COMM: 3,
  EXIT: 4,
  THROTTLE: 5,
  UNTHROTTLE: 6,
  FORK: 7,
  READ: 8,
  SAMPLE: 9,
  MMAP2: 10,
  AUX: 11,
  ITRACE_START: 12,
  LOST_SAMPLES: 13,
  SWITCH: 14,
  SWITCH_CPU_WIDE: 15,
  NAMESPACES: 16,
  KSYMBOL: 17,
  BPF_EVENT: 18,
  CGROUP: 19,
  TEXT_POKE: 20,
  AUX_OUTPUT_HW_ID: 21,
  // perf's user records (≥ 64): written by perf, never by the kernel
  HEADER_ATTR: 64,
  HEADER_EVENT_TYPE: 65,
  HEADER_TRACING_DATA: 66,
  HEADER_BUILD_ID: 67,
  FINISHED_ROUND: 68,
  ID_INDEX: 69,
  AUXTRACE_INFO: 70,
  AUXTRACE: 71,
  AUXTRACE_ERROR: 72,
  THREAD_MAP: 73,
  CPU_MAP: 74,
  STAT_CONFIG: 75,
  STAT: 76,
  STAT_ROUND: 77,
  EVENT_UPDATE: 78,
  TIME_CONV: 79,
  HEADER_FEATURE: 80,
  COMPRESSED: 81,
  FINISHED_INIT: 82,
  COMPRESSED2: 83,
} as const;

export type RecordTypeName = keyof typeof RecordType;

/** The seed's RFC text poke (type 19, single len, bytes[2*len]); only with --text-poke-abi=rfc. */
export const RFC_TEXT_POKE_TYPE = 19;

export const PERF_RECORD_USER_TYPE_START = 64;

const names = new Map<number, string>(Object.entries(RecordType).map(([k, v]) => [v, k]));

/** "MMAP2", "TEXT_POKE", or "UNKNOWN(99)" — never throws. */
export function recordTypeName(id: number): string {
  return names.get(id) ?? `UNKNOWN(${id})`;
}

export function isUserRecordType(id: number): boolean {
  return id >= PERF_RECORD_USER_TYPE_START;
}

/** header.misc bits (perf_event.h). */
export const PERF_RECORD_MISC_CPUMODE_MASK = 7;
export const PERF_RECORD_MISC_CPUMODE_UNKNOWN = 0;
export const PERF_RECORD_MISC_KERNEL = 1;
export const PERF_RECORD_MISC_USER = 2;
export const PERF_RECORD_MISC_HYPERVISOR = 3;
export const PERF_RECORD_MISC_GUEST_KERNEL = 4;
export const PERF_RECORD_MISC_GUEST_USER = 5;
export const PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT = 1 << 12;
export const PERF_RECORD_MISC_MMAP_DATA = 1 << 13;
export const PERF_RECORD_MISC_COMM_EXEC = 1 << 13;
export const PERF_RECORD_MISC_FORK_EXEC = 1 << 13;
export const PERF_RECORD_MISC_SWITCH_OUT = 1 << 13;
export const PERF_RECORD_MISC_EXACT_IP = 1 << 14;
export const PERF_RECORD_MISC_SWITCH_OUT_PREEMPT = 1 << 14;
export const PERF_RECORD_MISC_MMAP_BUILD_ID = 1 << 14;
export const PERF_RECORD_MISC_EXT_RESERVED = 1 << 15;

/** KSYMBOL types and flags. */
export const PERF_RECORD_KSYMBOL_TYPE_UNKNOWN = 0;
export const PERF_RECORD_KSYMBOL_TYPE_BPF = 1;
export const PERF_RECORD_KSYMBOL_TYPE_OOL = 2;
export const PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER = 1 << 0;

/** BPF_EVENT types. */
export const PERF_BPF_EVENT_UNKNOWN = 0;
export const PERF_BPF_EVENT_PROG_LOAD = 1;
export const PERF_BPF_EVENT_PROG_UNLOAD = 2;

/** AUX record flags. */
export const PERF_AUX_FLAG_TRUNCATED = 0x01;
export const PERF_AUX_FLAG_OVERWRITE = 0x02;
export const PERF_AUX_FLAG_PARTIAL = 0x04;
export const PERF_AUX_FLAG_COLLISION = 0x08;

/** perf_event_header is 8 bytes: u32 type, u16 misc, u16 size. */
export const PERF_EVENT_HEADER_SIZE = 8;
