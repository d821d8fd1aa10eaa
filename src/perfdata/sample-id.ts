import type { ByteReader } from '../io/byte-reader.js';
import type { ByteWriter } from '../io/byte-writer.js';
import { SampleType } from '../abi/sample-format.js';
import type { AttrLayout } from './layout.js';

/**
 * struct sample_id (uapi perf_event.h): trails every non-SAMPLE kernel record
 * when attr.sample_id_all is set. Only the fields of attr.sample_type are present.
 */
export interface SampleId {
  pid?: number;
  tid?: number;
  time?: bigint;
  id?: bigint;
  streamId?: bigint;
  cpu?: number;
  /** The u32 after cpu (reserved, kept for exact round trips). */
  cpuRes?: number;
  identifier?: bigint;
}

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

/** Decode the trailer occupying the reader's bytes (exactly layout.trailerSize). */
export function decodeSampleId(r: ByteReader, layout: AttrLayout): SampleId {
  const t = layout.sampleType;
  const s: SampleId = {};
  if (has(t, SampleType.TID)) {
    s.pid = r.i32();
    s.tid = r.i32();
  }
  if (has(t, SampleType.TIME)) s.time = r.u64();
  if (has(t, SampleType.ID)) s.id = r.u64();
  if (has(t, SampleType.STREAM_ID)) s.streamId = r.u64();
  if (has(t, SampleType.CPU)) {
    s.cpu = r.u32();
    s.cpuRes = r.u32();
  }
  if (has(t, SampleType.IDENTIFIER)) s.identifier = r.u64();
  return s;
}

export function encodeSampleId(s: SampleId, w: ByteWriter, layout: AttrLayout): void {
  const t = layout.sampleType;
  if (has(t, SampleType.TID)) w.i32(s.pid ?? 0).i32(s.tid ?? 0);
  if (has(t, SampleType.TIME)) w.u64(s.time ?? 0n);
  if (has(t, SampleType.ID)) w.u64(s.id ?? 0n);
  if (has(t, SampleType.STREAM_ID)) w.u64(s.streamId ?? 0n);
  if (has(t, SampleType.CPU)) w.u32(s.cpu ?? 0).u32(s.cpuRes ?? 0);
  if (has(t, SampleType.IDENTIFIER)) w.u64(s.identifier ?? 0n);
}
