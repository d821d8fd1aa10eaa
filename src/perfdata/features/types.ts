import type { EventAttr } from '../../abi/event-attr.js';

/**
 * Decoded feature sections, one variant per HEADER_* feature
 * (tools/perf/util/header.c write_* / process_*). `kind` is the feature's
 * name in lower case. Every variant encodes back to the same bytes
 * (strings re-padded to NAME_ALIGN, as perf writes them).
 */
export interface EventDesc {
  attr: EventAttr;
  name: string;
  ids: bigint[];
}
export interface CpuTopology {
  /** "sibling sockets" lists (package_cpus_list). */
  cores: string[];
  /** "sibling threads" lists (core_cpus_list). */
  threads: string[];
  /** Per cpu (nr_cpus_avail entries) core and socket ids; absent in files from old perf. */
  cpus?: { coreId: number; socketId: number }[];
  /** "sibling dies" lists and per-cpu die ids; absent in files from old perf. */
  dies?: string[];
  dieIds?: number[];
  /** Bytes after `threads` kept verbatim when nr_cpus_avail was unknown. */
  tail?: Uint8Array;
}
export interface NumaNode {
  node: number;
  memTotal: bigint;
  memFree: bigint;
  cpus: string;
}
export interface CacheLevel {
  level: number;
  lineSize: number;
  sets: number;
  ways: number;
  type: string;
  size: string;
  map: string;
}
export interface MemoryNode {
  node: bigint;
  size: bigint;
  /** The bitmap's own bit count (perf writes it again before the words). */
  bits: bigint;
  words: bigint[];
}
export interface PmuCaps {
  caps: { name: string; value: string }[];
  pmuName: string;
}
export interface BuildIdEntry {
  /** perf leaves the header type 0 here (write_buildid memsets the struct). */
  type: number;
  misc: number;
  pid: number;
  /** The 24-byte build_id field; with PERF_RECORD_MISC_BUILD_ID_SIZE byte 20 holds the used length. */
  buildId: Uint8Array;
  filename: string;
}
export interface AuxtraceIndexEntry {
  fileOffset: number;
  size: number;
}

export type FeatureData =
  | { kind: 'hostname' | 'osrelease' | 'version' | 'arch' | 'cpudesc' | 'cpuid'; value: string }
  | { kind: 'nrcpus'; avail: number; online: number }
  | { kind: 'total_mem'; kb: bigint }
  | { kind: 'cmdline'; argv: string[] }
  | { kind: 'event_desc'; attrSize: number; events: EventDesc[] }
  | ({ kind: 'cpu_topology' } & CpuTopology)
  | { kind: 'numa_topology'; nodes: NumaNode[] }
  | { kind: 'pmu_mappings'; pmus: { type: number; name: string }[] }
  | { kind: 'group_desc'; groups: { name: string; leaderIdx: number; nrMembers: number }[] }
  | { kind: 'cache'; version: number; levels: CacheLevel[] }
  | { kind: 'sample_time'; first: bigint; last: bigint }
  | { kind: 'mem_topology'; version: bigint; blockSize: bigint; nodes: MemoryNode[] }
  | { kind: 'clockid'; resNs: bigint }
  | { kind: 'dir_format'; version: bigint }
  | { kind: 'compressed'; version: number; type: number; level: number; ratio: number; mmapLen: number }
  | { kind: 'cpu_pmu_caps'; caps: { name: string; value: string }[] }
  | { kind: 'pmu_caps'; pmus: PmuCaps[] }
  | { kind: 'clock_data'; version: number; clockid: number; todNs: bigint; clockidNs: bigint }
  | { kind: 'hybrid_topology'; nodes: { pmuName: string; cpus: string }[] }
  | { kind: 'build_id'; entries: BuildIdEntry[] }
  | { kind: 'auxtrace'; entries: AuxtraceIndexEntry[] }
  | { kind: 'branch_stack' | 'stat' }
  /** Sections whose inside we keep as bytes: tracing_data, bpf_prog_info, bpf_btf, and unknown ids. */
  | { kind: 'raw'; id: number; bytes: Uint8Array };

export type FeatureKind = FeatureData['kind'];

/** What a decoder may need from other sections (cpu_topology needs nrcpus). */
export interface FeatureContext {
  nrCpusAvail?: number;
}
