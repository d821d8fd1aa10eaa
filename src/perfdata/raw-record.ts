import { RecordType } from '../abi/record-type.js';
import type { AttrLayout } from './layout.js';
import { decodeRecord, hasSampleIdTrailer, trailerEndOf, type PerfRecord } from './records/index.js';

/**
 * A zero-copy view of one record in the reader's window. `bytes` (and
 * `auxData`) are valid only until the iterator advances — call `copy()` to
 * keep one. Typed fields are decoded only when `decode()` is called.
 *
 * The record is `buf[off .. off + length)`. `bytes` is that range as its own
 * view, made on first use: a typed-array view costs 40–100 ns and ~100 bytes
 * of heap, and the hot paths (the reorder queue, script's plain sample lines)
 * read `buf` at `off` instead, so most records never get one.
 */
export class RawRecord {
  type!: number;
  misc!: number;
  size!: number;
  /** Absolute offset of the record (records from a COMPRESSED record: that record's offset, as perf). */
  fileOffset!: number;
  /** The array the record lies in, and where in it: the record is buf[off .. off + length). */
  buf!: Uint8Array;
  off!: number;
  /** Byte length of the record, 8-byte header included. */
  length!: number;
  private view: Uint8Array | undefined;
  /** Payload that follows the record in the file: AUXTRACE trace data, HEADER_TRACING_DATA data. */
  auxData?: Uint8Array;
  /** The attr layout this record resolved to (perf's evlist__event2evsel), if any. */
  layout!: AttrLayout | undefined;
  readonly le: boolean;
  readonly textPokeAbi: 'final' | 'rfc';
  /** The type of the COMPRESSED (81) or COMPRESSED2 (83) record it was unpacked from; 0 when read directly. */
  compressedIn!: number;

  constructor(
    bytes: Uint8Array,
    fileOffset: number,
    le: boolean,
    layout: AttrLayout | undefined,
    textPokeAbi: 'final' | 'rfc',
    compressedIn = 0,
    off = 0,
    length = bytes.length - off,
  ) {
    this.le = le;
    this.textPokeAbi = textPokeAbi;
    this.reset(bytes, fileOffset, layout, compressedIn, off, length);
  }

  /**
   * Make this object the record at bytes[off, off + length): what the session
   * does with the records it hands out again (SessionOptions.reuseRecords).
   * The fields above change only here.
   */
  reset(
    bytes: Uint8Array,
    fileOffset: number,
    layout: AttrLayout | undefined,
    compressedIn: number,
    off: number,
    length: number,
  ): void {
    // byte loads, not a DataView: one object less per record on the reader's hot path
    const b = bytes;
    const o = off;
    if (this.le) {
      this.type = (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
      this.misc = b[o + 4]! | (b[o + 5]! << 8);
      this.size = b[o + 6]! | (b[o + 7]! << 8);
    } else {
      this.type = ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
      this.misc = (b[o + 4]! << 8) | b[o + 5]!;
      this.size = (b[o + 6]! << 8) | b[o + 7]!;
    }
    this.buf = bytes;
    this.off = off;
    this.length = length;
    this.view = off === 0 && length === bytes.length ? bytes : undefined;
    this.auxData = undefined;
    this.fileOffset = fileOffset;
    this.layout = layout;
    this.compressedIn = compressedIn;
  }

  /** The whole record, 8-byte header included (a view made on first use). */
  get bytes(): Uint8Array {
    if (this.view === undefined) this.view = this.buf.subarray(this.off, this.off + this.length);
    return this.view;
  }

  private u64At(off: number): bigint {
    const b = this.buf;
    return new DataView(b.buffer, b.byteOffset + this.off, this.length).getBigUint64(off, this.le);
  }

  /**
   * SAMPLE TIME or the sample_id_all trailer's time, read through the attr's precomputed offsets;
   * undefined when absent.
   */
  timestamp(): bigint | undefined {
    const o = this.timeOffset();
    return o < 0 ? undefined : this.u64At(o);
  }

  /** Where timestamp() reads its u64 in `bytes`, or -1 (no time). */
  timeOffset(): number {
    const L = this.layout;
    if (!L) return -1;
    if (this.type === RecordType.SAMPLE) {
      const o = L.sampleTimeOffset;
      return o >= 0 && o + 8 <= this.size ? o : -1;
    }
    if (L.trailerTimeFromEnd > 0 && hasSampleIdTrailer(this.type) && this.size - L.trailerSize >= 8) {
      return this.trailerEnd(L.trailerSize) - L.trailerTimeFromEnd;
    }
    return -1;
  }

  /**
   * The time perf 6.1 reads: the sample_id at the record's very end. It differs
   * from timestamp() only on Linux 6.1's inflated TEXT_POKE/KSYMBOL/BPF_EVENT
   * records (records/index.ts bodyEndOf), where perf reads zeros: time 0.
   */
  perfTimestamp(): bigint | undefined {
    const o = this.perfTimeOffset();
    return o < 0 ? undefined : this.u64At(o);
  }

  /** Where perfTimestamp() reads its u64 in `bytes`, or -1 (no time). */
  perfTimeOffset(): number {
    const L = this.layout;
    if (!L || this.type === RecordType.SAMPLE) return this.timeOffset();
    if (L.trailerTimeFromEnd > 0 && hasSampleIdTrailer(this.type) && this.size - L.trailerSize >= 8) {
      return this.length - L.trailerTimeFromEnd;
    }
    return -1;
  }

  /** trailerEndOf without a view for the records whose sample_id is always at the end. */
  private trailerEnd(trailerSize: number): number {
    const t = this.type;
    if (t !== RecordType.TEXT_POKE && t !== RecordType.KSYMBOL && t !== RecordType.BPF_EVENT) return this.length;
    return trailerEndOf(t, this.bytes, this.le, trailerSize);
  }

  /** The u32 at `at` in `bytes` (record byte order): what the reorder queue reads a time by, as two halves. */
  u32At(at: number): number {
    const b = this.buf;
    const off = this.off + at;
    return this.le
      ? (b[off]! | (b[off + 1]! << 8) | (b[off + 2]! << 16) | (b[off + 3]! << 24)) >>> 0
      : ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0;
  }

  /** Allocates the typed record. Throws FormatError for a malformed body. */
  decode(): PerfRecord {
    const rec = decodeRecord(this.bytes, this.fileOffset, {
      le: this.le,
      layout: this.layout,
      textPokeAbi: this.textPokeAbi,
    });
    if (this.auxData && (rec.kind === 'auxtrace' || rec.kind === 'tracing_data')) rec.data = this.auxData;
    return rec;
  }

  /** A detached copy that outlives the reader's window. */
  copy(): RawRecord {
    const c = new RawRecord(
      this.bytes.slice(),
      this.fileOffset,
      this.le,
      this.layout,
      this.textPokeAbi,
      this.compressedIn,
    );
    if (this.auxData) c.auxData = this.auxData.slice();
    return c;
  }
}
