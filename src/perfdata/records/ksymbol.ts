import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_KSYMBOL (17): u64 addr; u32 len; u16 ksym_type; u16 flags; char name[] (padded to 8). */
export interface KsymbolRecord extends KernelRecordHead {
  kind: 'ksymbol';
  addr: bigint;
  len: number;
  ksymType: number;
  flags: number;
  name: string;
}
export function decodeKsymbol(r: ByteReader, h: RecordHead): KsymbolRecord {
  return { kind: 'ksymbol', ...h, addr: r.u64(), len: r.u32(), ksymType: r.u16(), flags: r.u16(), name: r.cstring() };
}
export function encodeKsymbol(rec: KsymbolRecord, w: ByteWriter): void {
  const start = w.pos;
  w.u64(rec.addr).u32(rec.len).u16(rec.ksymType).u16(rec.flags).cstring(rec.name);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}

/** PERF_RECORD_BPF_EVENT (18): u16 type; u16 flags; u32 id; u8 tag[8]. */
export interface BpfEventRecord extends KernelRecordHead {
  kind: 'bpf_event';
  bpfType: number;
  flags: number;
  id: number;
  tag: Uint8Array;
}
export function decodeBpfEvent(r: ByteReader, h: RecordHead): BpfEventRecord {
  return { kind: 'bpf_event', ...h, bpfType: r.u16(), flags: r.u16(), id: r.u32(), tag: r.copy(8) };
}
export function encodeBpfEvent(rec: BpfEventRecord, w: ByteWriter): void {
  const tag = new Uint8Array(8);
  tag.set(rec.tag.subarray(0, 8));
  w.u16(rec.bpfType).u16(rec.flags).u32(rec.id).bytes(tag);
}

/** PERF_RECORD_CGROUP (19): u64 id; char path[] (padded to 8). */
export interface CgroupRecord extends KernelRecordHead {
  kind: 'cgroup';
  id: bigint;
  path: string;
}
export function decodeCgroup(r: ByteReader, h: RecordHead): CgroupRecord {
  return { kind: 'cgroup', ...h, id: r.u64(), path: r.cstring() };
}
export function encodeCgroup(rec: CgroupRecord, w: ByteWriter): void {
  const start = w.pos;
  w.u64(rec.id).cstring(rec.path);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
