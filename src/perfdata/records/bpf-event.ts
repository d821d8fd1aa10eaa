import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { KernelRecordHead, RecordHead } from './common.js';

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
