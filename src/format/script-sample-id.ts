/**
 * The sample_id perf 6.1 reads from a kernel record: the trailer at the
 * record's very end. On Linux 6.1's inflated TEXT_POKE/KSYMBOL/BPF_EVENT
 * records (header.size too large, the real sample_id mid-record and zeros
 * after it: src/perfdata/records/index.ts bodyEndOf) the reader recovers the
 * real one; perf reads the end instead and prints pid 0, time 0 (`swapper 0
 * 0.000000`), so `script` shows what perf shows.
 */
import { ByteReader } from '../io/byte-reader.js';
import type { PerfRecord, RawRecord } from '../perfdata/index.js';
import { decodeSampleId, type SampleId } from '../perfdata/sample-id.js';

export function perfSampleId(raw: RawRecord, rec: PerfRecord): SampleId | undefined {
  const r = rec as { sampleId?: SampleId; inflatedBy?: number };
  const L = raw.layout;
  if (!r.inflatedBy || !r.sampleId || !L || raw.bytes.length < 8 + L.trailerSize) return r.sampleId;
  const at = raw.bytes.length - L.trailerSize;
  return decodeSampleId(new ByteReader(raw.bytes.subarray(at), raw.le, raw.fileOffset + at, 'sample_id'), L);
}
