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
