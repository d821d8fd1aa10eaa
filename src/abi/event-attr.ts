import { ByteReader } from '../io/byte-reader.js';
import { ByteWriter } from '../io/byte-writer.js';
import { FormatError } from '../io/errors.js';

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
    type: 0, size: PERF_ATTR_SIZE_VER8, config: 0n, samplePeriod: 0n, sampleType: 0n, readFormat: 0n, flags: 0n,
    wakeupEvents: 0, bpType: 0, config1: 0n, config2: 0n, branchSampleType: 0n, sampleRegsUser: 0n,
    sampleStackUser: 0, clockid: 0, sampleRegsIntr: 0n, auxWatermark: 0, sampleMaxStack: 0, auxSampleSize: 0,
    auxAction: 0, sigData: 0n, config3: 0n,
  };
}

/** Reverse the bits of each byte: how a big-endian compiler lays out a bitfield (perf's swap_bitfield). */
function revBitsPerByte(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) {
    let x = b[i]!;
    let r = 0;
    for (let k = 0; k < 8; k++) {
      r = (r << 1) | (x & 1);
      x >>= 1;
    }
    out[i] = r;
  }
  return out;
}

/**
 * Decode `attrSize` bytes at the reader's cursor as perf_event_attr. The
 * attr's own `size` field may be smaller (older perf) or larger (newer); we
 * read what is there and zero the rest.
 * Throws FormatError 'truncated' / 'bad-size'.
 */
export function decodeEventAttr(r: ByteReader, attrSize: number): EventAttr {
  const start = r.pos;
  if (attrSize < PERF_ATTR_SIZE_VER0) {
    throw new FormatError({ kind: 'bad-size', offset: r.base + start, structure: 'perf_event_attr', actual: attrSize, expected: `≥ ${PERF_ATTR_SIZE_VER0}` });
  }
  r.need(attrSize, 'perf_event_attr');
  const full = new Uint8Array(Math.max(attrSize, PERF_ATTR_SIZE_VER8));
  full.set(r.bytes.subarray(start, start + attrSize));
  const b = new ByteReader(full, r.le, r.base + start, 'perf_event_attr');
  const a = emptyAttr();
  a.type = b.u32();
  a.size = b.u32();
  a.config = b.u64();
  a.samplePeriod = b.u64();
  a.sampleType = b.u64();
  a.readFormat = b.u64();
  const fb = b.borrow(8);
  a.flags = r.le
    ? new DataView(fb.buffer, fb.byteOffset, 8).getBigUint64(0, true)
    : new DataView(revBitsPerByte(fb).buffer).getBigUint64(0, true);
  a.wakeupEvents = b.u32();
  a.bpType = b.u32();
  a.config1 = b.u64();
  a.config2 = b.u64();
  a.branchSampleType = b.u64();
  a.sampleRegsUser = b.u64();
  a.sampleStackUser = b.u32();
  a.clockid = b.i32();
  a.sampleRegsIntr = b.u64();
  a.auxWatermark = b.u32();
  a.sampleMaxStack = b.u16();
  b.u16();
  a.auxSampleSize = b.u32();
  a.auxAction = b.u32();
  a.sigData = b.u64();
  a.config3 = b.u64();
  r.pos = start + attrSize;
  return a;
}

/** Encode as `size` bytes (default attr.size), in the writer's byte order. */
export function encodeEventAttr(w: ByteWriter, a: EventAttr, size = a.size): void {
  const t = new ByteWriter(w.le, PERF_ATTR_SIZE_VER8);
  t.u32(a.type).u32(size).u64(a.config).u64(a.samplePeriod).u64(a.sampleType).u64(a.readFormat);
  const fw = new Uint8Array(8);
  new DataView(fw.buffer).setBigUint64(0, a.flags, true);
  t.bytes(w.le ? fw : revBitsPerByte(fw));
  t.u32(a.wakeupEvents).u32(a.bpType).u64(a.config1).u64(a.config2).u64(a.branchSampleType).u64(a.sampleRegsUser);
  t.u32(a.sampleStackUser).i32(a.clockid).u64(a.sampleRegsIntr).u32(a.auxWatermark).u16(a.sampleMaxStack).u16(0);
  t.u32(a.auxSampleSize).u32(a.auxAction).u64(a.sigData).u64(a.config3);
  const all = t.finish();
  if (size <= all.length) w.bytes(all.subarray(0, size));
  else w.bytes(all).zeros(size - all.length);
}
