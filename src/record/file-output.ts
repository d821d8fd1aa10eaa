/**
 * A streaming perf.data writer for live recording (file mode, host byte
 * order, since the kernel's records are in host order):
 *
 *   0     perf_file_header (104)         patched at the end
 *   104   ids of event 0, event 1, …     u64 each
 *   …     perf_file_attr[]               attr (attr.size) + ids section (16)
 *   …     data                           records, streamed as they arrive
 *   …     feature index                  perf_file_section per set bit
 *   …     feature bodies
 *
 * The same order as perf's perf_session__write_header, so the data can grow
 * without moving anything. Everything goes to a temporary file in the
 * destination folder, renamed over the target only by finish().
 */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { encodeEventAttr } from '../perfdata/event-attr-codec.js';
import { ByteWriter } from '../io/byte-writer.js';
import { encodeFileHeader, PERF_FILE_HEADER_SIZE } from '../perfdata/file-header.js';
import type { RecordEvent } from './events.js';
import type { FeatureSection } from './features.js';

/** perf_file_section: u64 offset, u64 size */
const FILE_SECTION_SIZE = 16;
export const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export interface OutputEvent {
  event: RecordEvent;
  ids: bigint[];
}

export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
}

export class PerfFileOutput {
  readonly path: string;
  readonly tmpPath: string;
  private fd: number;
  private readonly events: OutputEvent[];
  private readonly attrsSection: { offset: number; size: number };
  private readonly attrSize: number;
  readonly dataOffset: number;
  private pos: number;
  private done = false;

  private constructor(path: string, events: OutputEvent[]) {
    this.path = path;
    this.tmpPath = tempPathFor(path);
    this.events = events;
    this.attrSize = (events[0]?.event.attr.size ?? 0) + FILE_SECTION_SIZE;
    const w = new ByteWriter(HOST_LE, 4096);
    w.zeros(PERF_FILE_HEADER_SIZE);
    const idOffsets: number[] = [];
    for (const e of events) {
      idOffsets.push(w.pos);
      for (const id of e.ids) w.u64(id);
    }
    const attrsOffset = w.pos;
    events.forEach((e, k) => {
      encodeEventAttr(w, e.event.attr, this.attrSize - FILE_SECTION_SIZE);
      w.u64(idOffsets[k]!).u64(e.ids.length * 8);
    });
    this.attrsSection = { offset: attrsOffset, size: w.pos - attrsOffset };
    this.dataOffset = w.pos;
    this.fd = openSync(this.tmpPath, 'w', 0o600);
    try {
      writeSync(this.fd, w.finish());
    } catch (e) {
      this.abort();
      throw e;
    }
    this.pos = this.dataOffset;
  }

  /** Create `${dir}/.${name}.${pid}.tmp` and write everything before the data. */
  static create(path: string, events: OutputEvent[]): PerfFileOutput {
    if (events.length === 0) throw new Error('PerfFileOutput: no events');
    const size = events[0]!.event.attr.size;
    if (events.some((e) => e.event.attr.size !== size))
      throw new Error('PerfFileOutput: every attr must have the same size');
    return new PerfFileOutput(path, events);
  }

  get dataSize(): number {
    return this.pos - this.dataOffset;
  }

  /** Append whole records (host byte order). */
  writeRecords(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off, this.pos + off);
    this.pos += bytes.length;
  }

  /**
   * Hand the data tail to another writer (the native reader thread, which
   * appends with pwritev like perf does): where to write from.
   */
  appendTarget(): { fd: number; offset: number } {
    return { fd: this.fd, offset: this.pos };
  }

  /** Take the tail back after another writer appended up to `end`. */
  appendedUpTo(end: number): void {
    if (end < this.pos) throw new Error(`PerfFileOutput: appended end ${end} is before ${this.pos}`);
    this.pos = end;
  }

  /** Write the feature sections, patch the header, fsync and rename over `path`. Returns the final file size. */
  finish(features: FeatureSection[]): number {
    const sorted = [...features].sort((a, b) => a.id - b.id);
    const featOffset = this.pos;
    const w = new ByteWriter(HOST_LE, 4096);
    w.zeros(sorted.length * FILE_SECTION_SIZE);
    let at = featOffset + w.pos;
    sorted.forEach((f, k) => {
      w.patchU64(k * FILE_SECTION_SIZE, at);
      w.patchU64(k * FILE_SECTION_SIZE + 8, f.bytes.length);
      w.bytes(f.bytes);
      at += f.bytes.length;
    });
    this.writeRecords(w.finish());
    const h = new ByteWriter(HOST_LE, PERF_FILE_HEADER_SIZE);
    encodeFileHeader(h, {
      attrSize: this.attrSize,
      attrs: this.attrsSection,
      data: { offset: this.dataOffset, size: featOffset - this.dataOffset },
      eventTypes: { offset: 0, size: 0 },
      features: sorted.map((f) => f.id),
    });
    writeSync(this.fd, h.finish(), 0, PERF_FILE_HEADER_SIZE, 0);
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = -1;
    renameSync(this.tmpPath, this.path);
    this.done = true;
    return this.pos;
  }

  /** Drop the temporary file (on error or interruption before finish). */
  abort(): void {
    if (this.done) return;
    this.done = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    try {
      unlinkSync(this.tmpPath);
    } catch {
      // already gone
    }
  }
}
