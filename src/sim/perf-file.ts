/**
 * The simulator's records, written through the shared PerfDataWriter: the
 * attrs (at perf 6.1's attr size), the records simulate.ts builds by hand,
 * and AUXTRACE records with their payloads, which the writer indexes in the
 * HEADER_AUXTRACE feature (perf's intel_pt decoder finds the trace through
 * that index). The file holds no other feature: no host description, since
 * the recording describes a simulated machine.
 */
import { ByteWriter } from '../io/byte-writer.js';
import type { EventAttr } from '../abi/event-attr.js';
import { RecordType } from '../abi/record-type.js';
import { PerfDataWriter } from '../perfdata/writer.js';

/** perf 6.1's sizeof(struct perf_event_attr) (VER7): larger attrs are rejected by it. */
export const SIM_ATTR_SIZE = 128;

export interface SimAttr {
  attr: EventAttr;
  ids: bigint[];
}

export interface SimSampleId {
  pid: number;
  tid: number;
  time: bigint;
  cpu: number;
  id: bigint;
}

/** sample_id_all trailer for sample_type TID|TIME|CPU|IDENTIFIER (with or without IP). */
export function writeSampleId(w: ByteWriter, s: SimSampleId): void {
  w.u32(s.pid).u32(s.tid).u64(s.time).u32(s.cpu).u32(0).u64(s.id);
}

export class SimPerfFileWriter {
  private readonly w: PerfDataWriter;

  constructor(path: string, attrs: SimAttr[]) {
    this.w = PerfDataWriter.createFile(
      path,
      attrs.map((a) => ({ attr: { ...a.attr, size: SIM_ATTR_SIZE }, ids: a.ids })),
      { describe: false, features: [{ kind: 'auxtrace', entries: [] }] },
    );
  }

  /** A whole record: `body` is everything after the 8-byte header. */
  record(type: number, misc: number, body: Uint8Array): void {
    const size = 8 + body.length;
    if (size > 0xffff || size % 8)
      throw new Error(`sim writer: record type ${type} size ${size} not a multiple of 8 ≤ 65535`);
    const h = new ByteWriter(true, size);
    h.u32(type).u16(misc).u16(size).bytes(body);
    this.w.writeBytesSync(h.finish());
  }

  /** PERF_RECORD_AUXTRACE with its payload. */
  auxtrace(a: { offset: number; reference: bigint; idx: number; tid: number; cpu: number }, payload: Uint8Array): void {
    const w = new ByteWriter(true, 48);
    w.u32(RecordType.AUXTRACE).u16(0).u16(48);
    w.u64(payload.length).u64(a.offset).u64(a.reference).u32(a.idx).u32(a.tid).u32(a.cpu).u32(0);
    this.w.writeBytesSync(w.finish(), payload);
  }

  /** Write the feature sections and the header, then move the file into place. */
  close(): void {
    this.w.finishSync();
  }
}
