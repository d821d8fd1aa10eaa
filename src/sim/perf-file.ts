/**
 * The simulator's own minimal perf.data file writer: header, attrs with ids,
 * data records streamed to disk, and the HEADER_AUXTRACE feature (the index
 * of AUXTRACE records by file offset, which perf needs for `--itrace=b`,
 * notes item 4). It exists so the simulator does not wait for the general
 * writer; it writes only what the simulator produces.
 */
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { ByteWriter } from '../io/byte-writer.js';
import type { EventAttr } from '../abi/event-attr.js';
import { encodeEventAttr } from '../perfdata/event-attr-codec.js';
import { encodeFileHeader, PERF_FILE_HEADER_SIZE } from '../perfdata/file-header.js';
import { Feature } from '../abi/feature.js';
import { RecordType } from '../abi/record-type.js';

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
  private fd: number;
  private pos = 0;
  private dataStart = 0;
  private readonly tmp: string;
  private readonly index: { offset: number; size: number }[] = [];

  constructor(
    private readonly path: string,
    private readonly attrs: SimAttr[],
  ) {
    this.tmp = `${path}.tmp`;
    this.fd = openSync(this.tmp, 'w');
    this.put(new Uint8Array(PERF_FILE_HEADER_SIZE));
    const w = new ByteWriter(true);
    const idOffsets: number[] = [];
    for (const a of attrs) {
      idOffsets.push(this.pos + w.pos);
      for (const id of a.ids) w.u64(id);
    }
    this.attrsOffset = this.pos + w.pos;
    attrs.forEach((a, i) => {
      encodeEventAttr(w, { ...a.attr, size: SIM_ATTR_SIZE }, SIM_ATTR_SIZE);
      w.u64(idOffsets[i]!).u64(a.ids.length * 8);
    });
    this.put(w.finish());
    this.dataStart = this.pos;
  }
  private attrsOffset = 0;

  private put(b: Uint8Array): void {
    let done = 0;
    while (done < b.length) done += writeSync(this.fd, b, done, b.length - done, this.pos + done);
    this.pos += b.length;
  }

  /** A whole record: `body` is everything after the 8-byte header. */
  record(type: number, misc: number, body: Uint8Array): void {
    const size = 8 + body.length;
    if (size > 0xffff || size % 8)
      throw new Error(`sim writer: record type ${type} size ${size} not a multiple of 8 ≤ 65535`);
    const h = new ByteWriter(true, 8);
    h.u32(type).u16(misc).u16(size);
    this.put(h.finish());
    this.put(body);
  }

  /** PERF_RECORD_AUXTRACE with its payload; indexed for HEADER_AUXTRACE. */
  auxtrace(a: { offset: number; reference: bigint; idx: number; tid: number; cpu: number }, payload: Uint8Array): void {
    const at = this.pos;
    const w = new ByteWriter(true, 48);
    w.u32(RecordType.AUXTRACE).u16(0).u16(48);
    w.u64(payload.length).u64(a.offset).u64(a.reference).u32(a.idx).u32(a.tid).u32(a.cpu).u32(0);
    this.put(w.finish());
    this.put(payload);
    // sz is the record header size, not header + payload: perf checks it against header.size.
    this.index.push({ offset: at, size: 48 });
  }

  /** Write the feature sections and the header, then move the file into place. */
  close(): void {
    const dataEnd = this.pos;
    // Feature table: one perf_file_section per set bit, then the data.
    const features = [Feature.AUXTRACE];
    const tableAt = this.pos;
    const body = new ByteWriter(true);
    body.u64(this.index.length);
    for (const e of this.index) body.u64(e.offset).u64(e.size);
    const table = new ByteWriter(true);
    table.u64(tableAt + features.length * 16).u64(body.pos);
    this.put(table.finish());
    this.put(body.finish());
    const hw = new ByteWriter(true, PERF_FILE_HEADER_SIZE);
    encodeFileHeader(hw, {
      attrSize: SIM_ATTR_SIZE + 16,
      attrs: { offset: this.attrsOffset, size: this.attrs.length * (SIM_ATTR_SIZE + 16) },
      data: { offset: this.dataStart, size: dataEnd - this.dataStart },
      eventTypes: { offset: 0, size: 0 },
      features,
    });
    writeSync(this.fd, hw.finish(), 0, PERF_FILE_HEADER_SIZE, 0);
    closeSync(this.fd);
    renameSync(this.tmp, this.path);
  }
}
