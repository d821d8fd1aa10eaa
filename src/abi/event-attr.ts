/**
 * struct perf_event_attr (uapi perf_event.h). The struct grows over kernel
 * versions; `size` says how much of it a file holds (PERF_ATTR_SIZE_VER0 = 64
 * … VER8 = 136). Fields past `size` read as zero.
 */
export const PERF_ATTR_SIZE_VER0 = 64;
export const PERF_ATTR_SIZE_VER8 = 136;

/** Bit numbers inside the u64 flags word that follows read_format. */
export const AttrFlag = {
  disabled: 0,
  inherit: 1,
  pinned: 2,
  exclusive: 3,
  exclude_user: 4,
  exclude_kernel: 5,
  exclude_hv: 6,
  exclude_idle: 7,
  mmap: 8,
  comm: 9,
  freq: 10,
  inherit_stat: 11,
  enable_on_exec: 12,
  task: 13,
  watermark: 14,
  // precise_ip is a 2-bit field at 15..16
  mmap_data: 17,
  sample_id_all: 18,
  exclude_host: 19,
  exclude_guest: 20,
  exclude_callchain_kernel: 21,
  exclude_callchain_user: 22,
  mmap2: 23,
  comm_exec: 24,
  use_clockid: 25,
  context_switch: 26,
  write_backward: 27,
  namespaces: 28,
  ksymbol: 29,
  bpf_event: 30,
  aux_output: 31,
  cgroup: 32,
  text_poke: 33,
  build_id: 34,
  inherit_thread: 35,
  remove_on_exec: 36,
  sigtrap: 37,
} as const;
export type AttrFlagName = keyof typeof AttrFlag;

/** The seed's RFC put text_poke at bit 32, which upstream gave to cgroup. */
export const RFC_TEXT_POKE_ATTR_BIT = 32;

/** perf_type_id */
export const PerfType = {
  HARDWARE: 0,
  SOFTWARE: 1,
  TRACEPOINT: 2,
  HW_CACHE: 3,
  RAW: 4,
  BREAKPOINT: 5,
} as const;

export const PERF_COUNT_SW_CPU_CLOCK = 0;
export const PERF_COUNT_SW_TASK_CLOCK = 1;
export const PERF_COUNT_SW_DUMMY = 9;

export interface EventAttr {
  type: number;
  size: number;
  config: bigint;
  /** sample_period or sample_freq (union; `freq` flag says which). */
  samplePeriod: bigint;
  sampleType: bigint;
  readFormat: bigint;
  /** The bitfield word, normalised so bit n is AttrFlag n whatever the file's byte order. */
  flags: bigint;
  wakeupEvents: number;
  bpType: number;
  config1: bigint;
  config2: bigint;
  branchSampleType: bigint;
  sampleRegsUser: bigint;
  sampleStackUser: number;
  clockid: number;
  sampleRegsIntr: bigint;
  auxWatermark: number;
  sampleMaxStack: number;
  auxSampleSize: number;
  auxAction: number;
  sigData: bigint;
  config3: bigint;
}

export function attrFlag(attr: EventAttr, name: AttrFlagName): boolean {
  return ((attr.flags >> BigInt(AttrFlag[name])) & 1n) === 1n;
}
export function attrPreciseIp(attr: EventAttr): number {
  return Number((attr.flags >> 15n) & 3n);
}
export function withAttrFlag(flags: bigint, name: AttrFlagName, on = true): bigint {
  const bit = 1n << BigInt(AttrFlag[name]);
  return on ? flags | bit : flags & ~bit;
}

export function emptyAttr(): EventAttr {
  return {
    type: 0,
    size: PERF_ATTR_SIZE_VER8,
    config: 0n,
    samplePeriod: 0n,
    sampleType: 0n,
    readFormat: 0n,
    flags: 0n,
    wakeupEvents: 0,
    bpType: 0,
    config1: 0n,
    config2: 0n,
    branchSampleType: 0n,
    sampleRegsUser: 0n,
    sampleStackUser: 0,
    clockid: 0,
    sampleRegsIntr: 0n,
    auxWatermark: 0,
    sampleMaxStack: 0,
    auxSampleSize: 0,
    auxAction: 0,
    sigData: 0n,
    config3: 0n,
  };
}
