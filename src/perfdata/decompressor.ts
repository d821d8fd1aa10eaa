/**
 * perf record -z: the records inside COMPRESSED / COMPRESSED2 records, unpacked
 * as the reader meets them.
 */
import { createRequire } from 'node:module';
import type { Decompress } from 'fzstd';
import { ByteReader } from '../io/byte-reader.js';
import { FormatError } from '../io/errors.js';
import { RecordType } from '../abi/record-type.js';
import type { AttrLayout } from './layout.js';
import { RawRecord } from './raw-record.js';
import { structureName } from './records/index.js';
import { ZSTD_MAX_WINDOW, zstdFrameWindow } from './zstd-window.js';

/**
 * fzstd is loaded on the first COMPRESSED record, not at start-up: most
 * recordings have none, and every command that reads perf.data (stats
 * first) would pay for compiling it.
 */
let fzstd: typeof import('fzstd') | undefined;
export function loadFzstd(): typeof import('fzstd') {
  fzstd ??= createRequire(import.meta.url)('fzstd') as typeof import('fzstd');
  return fzstd;
}

/** What the unpacked records take from their file: byte order, type 19's ABI and each record's sample layout. */
export interface RecordFraming {
  readonly le: boolean;
  readonly textPokeAbi: 'final' | 'rfc';
  layoutFor(bytes: Uint8Array, type: number, size: number, at?: number): AttrLayout | undefined;
}

/**
 * Unpacks COMPRESSED records (perf record -z): one zstd stream per file whose
 * output is a sequence of whole records; a record may straddle two COMPRESSED
 * records, so the unfinished tail is kept (perf's decomp_last). Memory: the
 * decompressor's window plus one COMPRESSED record's output.
 */
export class Decompressor {
  private z: Decompress | undefined;
  private out: Uint8Array[] = [];
  private tail: Uint8Array = new Uint8Array(0);
  private readonly f: RecordFraming;
  private lastOffset = 0;
  constructor(f: RecordFraming) {
    this.f = f;
  }

  push(raw: RawRecord): RawRecord[] {
    this.z ??= new (loadFzstd().Decompress)((chunk) => {
      this.out.push(chunk);
    });
    let data = raw.bytes.subarray(8);
    if (raw.type === RecordType.COMPRESSED2) {
      const r = new ByteReader(data, this.f.le, raw.fileOffset + 8, 'COMPRESSED2 (83)');
      const n = r.u64n('COMPRESSED2 (83).data_size');
      data = r.borrow(n);
    }
    const win = zstdFrameWindow(data);
    if (win !== undefined && win > ZSTD_MAX_WINDOW)
      throw new FormatError({
        kind: 'unsupported',
        offset: raw.fileOffset + 8,
        structure: `${structureName(raw.type)} zstd frame header`,
        actual: win,
        expected: `a zstd window of at most ${ZSTD_MAX_WINDOW} bytes`,
      });
    try {
      this.z.push(data.slice());
    } catch (e) {
      throw new FormatError({
        kind: 'bad-value',
        offset: raw.fileOffset + 8,
        structure: `${structureName(raw.type)} zstd data`,
        actual: (e as Error).message,
        expected: 'a valid zstd stream',
      });
    }
    let total = this.tail.length;
    for (const c of this.out) total += c.length;
    const buf = new Uint8Array(total);
    buf.set(this.tail);
    let o = this.tail.length;
    for (const c of this.out) {
      buf.set(c, o);
      o += c.length;
    }
    this.out = [];
    const recs: RawRecord[] = [];
    let p = 0;
    const le = this.f.le;
    while (buf.length - p >= 8) {
      // byte loads, not a DataView: no object per unpacked record
      const size = le ? buf[p + 6]! | (buf[p + 7]! << 8) : (buf[p + 6]! << 8) | buf[p + 7]!;
      const type = le
        ? (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)) >>> 0
        : ((buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!) >>> 0;
      if (size < 8) {
        throw new FormatError({
          kind: 'bad-size',
          offset: raw.fileOffset,
          structure: `${structureName(type)} inside COMPRESSED (decompressed offset 0x${p.toString(16)})`,
          actual: size,
          expected: '≥ 8',
        });
      }
      if (buf.length - p < size) break;
      const layout = this.f.layoutFor(buf, type, size, p);
      recs.push(new RawRecord(buf, raw.fileOffset, le, layout, this.f.textPokeAbi, raw.type, p, size));
      p += size;
    }
    this.tail = buf.slice(p);
    this.lastOffset = raw.fileOffset;
    return recs;
  }

  finish(): void {
    if (this.tail.length) {
      throw new FormatError({
        kind: 'truncated',
        offset: this.lastOffset,
        structure: 'COMPRESSED (81) contents',
        expected: 'whole records',
        actual: `${this.tail.length} bytes of a partial record at the end`,
      });
    }
  }
}
