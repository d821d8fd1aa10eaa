/**
 * fast-count.ts's walk inside COMPRESSED / COMPRESSED2 records (perf record -z):
 * the zstd stream's output goes into one reused buffer and its records are
 * visited in place, without a RawRecord, a DataView or a copy per record (the
 * reader's Decompressor makes all three, which made `stats` on a -z file ~5x
 * perf's time). Whatever the reader would reject (a bad frame, a record shorter
 * than its header, a partial record at the end) throws NotFast: the reader path
 * then runs and raises its FormatError.
 */
import type { Decompress } from 'fzstd';
import { RecordType } from '../abi/record-type.js';
import { loadFzstd } from '../perfdata/decompressor.js';
import { ZSTD_MAX_WINDOW, zstdFrameWindow } from '../perfdata/zstd-window.js';

/** Bail out: the reader path must take this file. */
export class NotFast extends Error {}

/** Called for each whole inner record: its bytes are buf[p, p + size) (valid during the call only). */
export type InnerVisit = (buf: Uint8Array, dv: DataView, p: number, type: number, size: number) => void;

export class InnerRecords {
  private z: Decompress | undefined;
  /** Allocated on the first COMPRESSED record: most files have none. */
  private buf = new Uint8Array(0);
  private dv = new DataView(this.buf.buffer);
  /** Valid bytes in buf: the partial record kept from the previous COMPRESSED record, then new output. */
  private have = 0;
  private readonly le: boolean;
  constructor(le: boolean) {
    this.le = le;
  }

  /** Unpack the COMPRESSED(2) record at rec[p, p + size) and visit the whole records it completes. */
  push(rec: Uint8Array, p: number, type: number, size: number, visit: InnerVisit): void {
    let from = p + 8;
    let len = size - 8;
    if (type === RecordType.COMPRESSED2) {
      // data_size (u64) then the data
      if (size < 16) throw new NotFast();
      const d = new DataView(rec.buffer, rec.byteOffset + p + 8, 8);
      const n = d.getUint32(this.le ? 0 : 4, this.le) + d.getUint32(this.le ? 4 : 0, this.le) * 2 ** 32;
      if (n > size - 16) throw new NotFast();
      from = p + 16;
      len = n;
    }
    const data = rec.slice(from, from + len); // fzstd may keep the input past this call
    const win = zstdFrameWindow(data);
    if (win !== undefined && win > ZSTD_MAX_WINDOW) throw new NotFast();
    this.z ??= new (loadFzstd().Decompress)((chunk) => this.append(chunk));
    try {
      this.z.push(data);
    } catch {
      throw new NotFast();
    }
    const b = this.buf;
    const dv = this.dv;
    const le = this.le;
    let q = 0;
    while (this.have - q >= 8) {
      const s = dv.getUint16(q + 6, le);
      if (s < 8) throw new NotFast();
      if (this.have - q < s) break;
      visit(b, dv, q, dv.getUint32(q, le), s);
      q += s;
    }
    b.copyWithin(0, q, this.have);
    this.have -= q;
  }

  /** The stream ended: a partial record left over is the reader's error to raise. */
  finish(): void {
    if (this.have) throw new NotFast();
  }

  private append(chunk: Uint8Array): void {
    if (this.have + chunk.length > this.buf.length) {
      const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.have + chunk.length, 1 << 20));
      bigger.set(this.buf.subarray(0, this.have));
      this.buf = bigger;
      this.dv = new DataView(bigger.buffer);
    }
    this.buf.set(chunk, this.have);
    this.have += chunk.length;
  }
}
