/** HEADER_* feature bits of the perf.data file header (tools/perf/util/header.h). */
export const Feature = {
  RESERVED: 0, // HEADER_RESERVED: always unset
  TRACING_DATA: 1,
  BUILD_ID: 2,
  HOSTNAME: 3,
  OSRELEASE: 4,
  VERSION: 5,
  ARCH: 6,
  NRCPUS: 7,
  CPUDESC: 8,
  CPUID: 9,
  TOTAL_MEM: 10,
  CMDLINE: 11,
  EVENT_DESC: 12,
  CPU_TOPOLOGY: 13,
  NUMA_TOPOLOGY: 14,
  BRANCH_STACK: 15,
  PMU_MAPPINGS: 16,
  GROUP_DESC: 17,
  AUXTRACE: 18,
  STAT: 19,
  CACHE: 20,
  SAMPLE_TIME: 21,
  MEM_TOPOLOGY: 22,
  CLOCKID: 23,
  DIR_FORMAT: 24,
  BPF_PROG_INFO: 25,
  BPF_BTF: 26,
  COMPRESSED: 27,
  CPU_PMU_CAPS: 28,
  CLOCK_DATA: 29,
  HYBRID_TOPOLOGY: 30,
  PMU_CAPS: 31,
} as const;

/** HEADER_FEAT_BITS: the adds_features bitmap is 256 bits. */
export const HEADER_FEAT_BITS = 256;

const names = new Map<number, string>(Object.entries(Feature).map(([k, v]) => [v, k]));
export function featureName(id: number): string {
  return names.get(id) ?? `FEAT_${id}`;
}
