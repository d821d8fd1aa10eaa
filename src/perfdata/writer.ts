import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import os from 'node:os';
import { ByteWriter } from '../io/byte-writer.js';
import { Feature } from '../abi/feature.js';
import { RecordType } from '../abi/record-type.js';
import { attrLayout, type AttrLayout } from './layout.js';
import { encodeRecord, hasSampleIdTrailer, type PerfRecord } from './records/index.js';
import { featureIdOf, type FeatureData, type AuxtraceIndexEntry } from './features/index.js';
import {
  checkSampleTypes,
  encodeFeatureTail,
  encodeFileHead,
  encodeHead,
  encodePipePreamble,
  fileLayout,
  sizeAttrs,
  type WriterAttr,
} from './writer-layout.js';

export type { WriterAttr } from './writer-layout.js';

export interface PerfDataWriterOptions {
  /** Write a big-endian file (default: little-endian). */
  bigEndian?: boolean;
  /** Feature sections to write (copied from an input, or made by hand). */
  features?: FeatureData[];
  /**
   * Add the features that describe this host and the attrs (hostname, osrelease, version,
   * arch, nrcpus, cmdline when not given; EVENT_DESC always regenerated). Default true;
   * false writes exactly `features` (plus the AUXTRACE index when there are AUXTRACE records).
   */
  describe?: boolean;
  /** File mode: permission bits of the new file (default 0o666 less the umask; perf record uses 0o600). */
  mode?: number;
  /** File mode: fsync the file before the rename. */
  fsync?: boolean;
  /**
   * Test only: grow every kernel record by this many junk bytes (multiple of 8),
   * placed before the sample_id trailer, to prove readers honour header.size.
   */
  padRecords?: number;
}

const FLUSH_AT = 1 << 20;

/**
 * PerfDataWriter: the one perf.data writer (inject, convert, record and sim
 * all write through it). Records are appended as they come, through a 1 MiB
 * buffer; the attrs go first and the features and the header are written when
 * `finish()` knows the sizes (layout: writer-layout.ts).
 *
 * File mode writes `<out>.tmp-<pid>` beside the target and renames it at the
 * end; `abort()` (or any failure in finish) removes it and leaves an existing
 * output untouched. File mode is synchronous underneath, so callers that
 * cannot await (the simulator, the recorder's callbacks) use createFile,
 * writeBytesSync, writeRecordsSync, finishSync and abortSync. `out === '-'`
 * writes pipe mode to stdout: pipe header, HEADER_ATTR, HEADER_FEATURE and
 * HEADER_TRACING_DATA records, then the records.
 *
 * AUXTRACE records (type 71) carry their trace payload after the record; the
 * writer notes each one's output offset and size, and finish() writes that as
 * the AUXTRACE feature — perf's intel_pt decoder finds the trace through it,
 * so it must describe the output, not the input.
 */
export class PerfDataWriter {
  readonly le: boolean;
  readonly pipe: boolean;
  readonly attrs: WriterAttr[];
  /** Output layouts, one per attr (sample fields, sample_id trailer). */
  readonly layouts: AttrLayout[];
  private readonly out: string;
  private readonly tmp: string;
  private fd = -1;
  private readonly features = new Map<number, FeatureData>();
  private readonly attrSize: number;
  private readonly dataOffset: number;
  private readonly pad: number;
  private readonly fsync: boolean;
  private buf = new Uint8Array(FLUSH_AT);
  private bufLen = 0;
  /** Where the next write to the temporary file goes. */
  private filePos = 0;
  /** Bytes of the data section so far (buffered ones included). */
  private dataBytes = 0;
  private readonly auxIndex: AuxtraceIndexEntry[] = [];
  private sawAuxtrace = false;
  private firstSample: bigint | undefined;
  private lastSample: bigint | undefined;
  private done = false;
  private readonly idToAttr = new Map<bigint, number>();

  private constructor(out: string, attrs: WriterAttr[], opts: PerfDataWriterOptions) {
    this.out = out;
    this.pipe = out === '-';
    this.tmp = this.pipe ? '' : join(dirname(out), `${basename(out)}.tmp-${process.pid}`);
    this.le = !opts.bigEndian;
    this.pad = opts.padRecords ?? 0;
    this.fsync = opts.fsync ?? false;
    if (this.pad % 8 !== 0) throw new Error('padRecords must be a multiple of 8');
    const sized = sizeAttrs(attrs);
    this.attrs = sized.attrs;
    this.attrSize = sized.attrSize;
    this.layouts = this.attrs.map((a) => attrLayout(a.attr, this.le));
    this.attrs.forEach((a, i) => {
      for (const id of a.ids) if (!this.idToAttr.has(id)) this.idToAttr.set(id, i);
    });
    this.dataOffset = fileLayout(this.attrs, this.attrSize).dataAt;
    for (const f of opts.features ?? []) this.features.set(featureIdOf(f), f);
    if (!this.features.has(Feature.STAT)) checkSampleTypes(this.attrs);
    if (opts.describe ?? true) this.addDescription();
  }

  /**
   * Create the writer (and, in file mode, the temporary output file, with
   * everything before the data written). Throws on I/O errors; nothing is left behind then.
   */
  static async create(out: string, attrs: WriterAttr[], opts: PerfDataWriterOptions = {}): Promise<PerfDataWriter> {
    if (out !== '-') return PerfDataWriter.createFile(out, attrs, opts);
    const w = new PerfDataWriter(out, attrs, opts);
    await writeStdout(encodePipePreamble(w.le, w.attrs, w.features));
    return w;
  }

  /** create() for a file (not '-'), synchronously. */
  static createFile(out: string, attrs: WriterAttr[], opts: PerfDataWriterOptions = {}): PerfDataWriter {
    if (out === '-') throw new Error('PerfDataWriter.createFile: pipe mode needs create()');
    const w = new PerfDataWriter(out, attrs, opts);
    w.fd = openSync(w.tmp, 'w', opts.mode ?? 0o666);
    try {
      w.writeFile(encodeFileHead(w.le, w.attrs, w.attrSize));
    } catch (e) {
      w.abortSync();
      throw e;
    }
    return w;
  }

  /** The attr index of a sample/record id (first attr when unknown). */
  attrIndexForId(id: bigint | undefined): number {
    return id === undefined ? 0 : (this.idToAttr.get(id) ?? 0);
  }

  setFeature(f: FeatureData): void {
    this.features.set(featureIdOf(f), f);
  }

  private addDescription(): void {
    const put = (f: FeatureData) => {
      const id = featureIdOf(f);
      if (!this.features.has(id)) this.features.set(id, f);
    };
    put({ kind: 'hostname', value: os.hostname() });
    put({ kind: 'osrelease', value: os.release() });
    put({ kind: 'version', value: 'perfpoke 0.1.0' });
    put({ kind: 'arch', value: os.machine() });
    const n = os.cpus().length || 1;
    put({ kind: 'nrcpus', avail: n, online: n });
    put({ kind: 'cmdline', argv: ['perfpoke', ...process.argv.slice(2)] });
    // EVENT_DESC always describes the attrs as written (inject may change them)
    this.features.set(Feature.EVENT_DESC, {
      kind: 'event_desc',
      attrSize: this.attrSize,
      events: this.attrs.map((a, i) => ({ attr: a.attr, ids: a.ids, name: a.name ?? `event${i}` })),
    });
  }

  private writeFile(b: Uint8Array): void {
    let done = 0;
    while (done < b.length) done += writeSync(this.fd, b, done, b.length - done, this.filePos + done);
    this.filePos += b.length;
  }

  private fileOnly(what: string): void {
    if (this.pipe) throw new Error(`PerfDataWriter.${what}: file mode only`);
    if (this.done) throw new Error('PerfDataWriter: write after finish/abort');
  }

  /** Append to the output buffer (one copy, no per-record allocation); file mode flushes when full. */
  private pushFile(b: Uint8Array): void {
    if (this.bufLen + b.length > this.buf.length) this.flushFile();
    if (b.length > this.buf.length) {
      this.writeFile(b);
      return;
    }
    this.buf.set(b, this.bufLen);
    this.bufLen += b.length;
  }

  private flushFile(): void {
    if (!this.bufLen) return;
    this.writeFile(this.buf.subarray(0, this.bufLen));
    this.bufLen = 0;
  }

  /** Pipe mode: stdout may hold a buffer until it drains, so it always gets its own copy. */
  private async pushPipe(b: Uint8Array): Promise<void> {
    if (this.bufLen + b.length > this.buf.length) await this.flushPipe();
    if (b.length > this.buf.length) return writeStdout(b.slice());
    this.buf.set(b, this.bufLen);
    this.bufLen += b.length;
  }

  private async flushPipe(): Promise<void> {
    if (!this.bufLen) return;
    const out = this.buf.slice(0, this.bufLen);
    this.bufLen = 0;
    await writeStdout(out);
  }

  /** Offset the next record will get in the output (for callers that index records). */
  get offset(): number {
    return (this.pipe ? 0 : this.dataOffset) + this.dataBytes;
  }

  /**
   * Append a decoded record, encoded with attr `attrIndex`'s output layout
   * (default: found from its sample id). `payload`: the AUXTRACE trace data
   * (defaults to rec.data for auxtrace records).
   */
  async write(rec: PerfRecord, attrIndex?: number, payload?: Uint8Array): Promise<void> {
    const idx = attrIndex ?? this.attrIndexFor(rec);
    const layout = this.layouts[idx];
    const w = new ByteWriter(this.le, 256);
    encodeRecord(rec, w, { layout });
    if (rec.kind === 'sample' && rec.time !== undefined) this.noteSampleTime(rec.time);
    const trailer = layout && hasSampleIdTrailer(rec.type) ? layout.trailerSize : 0;
    const data = rec.kind === 'auxtrace' || rec.kind === 'tracing_data' ? (payload ?? rec.data) : payload;
    await this.writeBytes(w.finish(), data, trailer);
  }

  private attrIndexFor(rec: PerfRecord): number {
    if (rec.kind === 'sample') return this.attrIndexForId(rec.id ?? rec.identifier);
    const sid = (rec as { sampleId?: { id?: bigint; identifier?: bigint } }).sampleId;
    return this.attrIndexForId(sid?.id ?? sid?.identifier);
  }

  /** Note a SAMPLE's time for the SAMPLE_TIME feature (write() does it for decoded samples). */
  noteSampleTime(t: bigint): void {
    if (this.firstSample === undefined || t < this.firstSample) this.firstSample = t;
    if (this.lastSample === undefined || t > this.lastSample) this.lastSample = t;
  }

  /**
   * Append one whole record already in the output byte order (a raw copy),
   * plus its trailing payload (AUXTRACE data, tracing data). `trailerSize`
   * tells padRecords where the sample_id trailer starts.
   */
  async writeBytes(bytes: Uint8Array, payload?: Uint8Array, trailerSize = 0): Promise<void> {
    if (this.done) throw new Error('PerfDataWriter: write after finish/abort');
    const parts = this.account(bytes, payload, trailerSize);
    if (!this.pipe) for (const p of parts) this.pushFile(p);
    else for (const p of parts) await this.pushPipe(p);
  }

  /** writeBytes() for file mode, synchronously. */
  writeBytesSync(bytes: Uint8Array, payload?: Uint8Array, trailerSize = 0): void {
    this.fileOnly('writeBytesSync');
    for (const p of this.account(bytes, payload, trailerSize)) this.pushFile(p);
  }

  /** Append several whole records (each AUXTRACE followed by its payload), as one block of bytes. */
  writeRecordsSync(block: Uint8Array): void {
    const dv = new DataView(block.buffer, block.byteOffset, block.byteLength);
    for (let at = 0; at < block.length; ) {
      const size = dv.getUint16(at + 6, this.le);
      if (size < 8 || at + size > block.length) throw new Error(`PerfDataWriter: bad record size ${size} at ${at}`);
      const aux = dv.getUint32(at, this.le) === RecordType.AUXTRACE ? Number(dv.getBigUint64(at + 8, this.le)) : 0;
      const end = at + size + aux;
      if (end > block.length) throw new Error(`PerfDataWriter: AUXTRACE payload at ${at + size} ends past the block`);
      this.writeBytesSync(block.subarray(at, at + size), aux ? block.subarray(at + size, end) : undefined);
      at = end;
    }
  }

  /** Bookkeeping for one record (features it feeds, padding, AUXTRACE index); returns the bytes to append. */
  private account(bytes: Uint8Array, payload: Uint8Array | undefined, trailerSize: number): Uint8Array[] {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const type = dv.getUint32(0, this.le);
    if (type === RecordType.HEADER_TRACING_DATA && !this.pipe) {
      // file mode keeps the tracepoint formats in the TRACING_DATA feature (perf refuses tracepoint attrs without it)
      const data = (payload ?? new Uint8Array(0)).slice();
      this.features.set(Feature.TRACING_DATA, { kind: 'raw', id: Feature.TRACING_DATA, bytes: data });
      return [];
    }
    if (this.pad && type < 64) {
      const cut = bytes.length - trailerSize;
      const grown = new Uint8Array(bytes.length + this.pad);
      grown.set(bytes.subarray(0, cut));
      grown.fill(0xa5, cut, cut + this.pad);
      grown.set(bytes.subarray(cut), cut + this.pad);
      new DataView(grown.buffer).setUint16(6, grown.length, this.le);
      bytes = grown;
    }
    if (type === RecordType.AUXTRACE) {
      this.sawAuxtrace = true;
      // perf's auxtrace_index__auxtrace_event: sz is header.size (the payload is not counted);
      // perf 6.1 rejects an index whose sz differs from the record's header.size
      this.auxIndex.push({ fileOffset: this.offset, size: bytes.length });
    }
    this.dataBytes += bytes.length;
    if (!payload?.length) return [bytes];
    this.dataBytes += payload.length;
    return [bytes, payload];
  }

  /**
   * Hand the data tail to another writer (the native recorder's thread, which
   * appends with pwritev as perf does): the file descriptor and where to write.
   * Give it back with appendedUpTo() before writing anything else.
   */
  appendTarget(): { fd: number; offset: number } {
    this.fileOnly('appendTarget');
    this.flushFile();
    return { fd: this.fd, offset: this.filePos };
  }

  /** Take the tail back after another writer appended whole records up to `end`. */
  appendedUpTo(end: number): void {
    this.fileOnly('appendedUpTo');
    if (end < this.filePos) throw new Error(`PerfDataWriter: appended end ${end} is before ${this.filePos}`);
    this.dataBytes += end - this.filePos;
    this.filePos = end;
  }

  /** The features as finish() writes them. */
  private finalFeatures(): Map<number, FeatureData> {
    if (this.sawAuxtrace || this.features.has(Feature.AUXTRACE))
      this.features.set(Feature.AUXTRACE, { kind: 'auxtrace', entries: this.auxIndex });
    if (this.features.has(Feature.SAMPLE_TIME) && this.firstSample !== undefined)
      this.features.set(Feature.SAMPLE_TIME, { kind: 'sample_time', first: this.firstSample, last: this.lastSample! });
    return this.features;
  }

  /**
   * Write the features and the header, close, rename into place; returns the
   * size of the file (0 in pipe mode). On failure the temporary file is
   * removed and the error rethrown.
   */
  async finish(): Promise<number> {
    if (!this.pipe) return this.finishSync();
    if (this.done) return 0;
    try {
      await this.flushPipe();
      this.done = true;
      return 0;
    } catch (e) {
      await this.abort();
      throw e;
    }
  }

  /** finish() for file mode, synchronously. */
  finishSync(): number {
    if (this.done) return this.filePos;
    if (this.pipe) throw new Error('PerfDataWriter.finishSync: file mode only');
    try {
      this.flushFile();
      const tail = encodeFeatureTail(this.le, this.finalFeatures(), this.filePos);
      this.writeFile(tail.bytes);
      const size = this.filePos;
      const head = encodeHead(this.le, this.attrs, this.attrSize, this.dataBytes, tail.ids);
      writeSync(this.fd, head, 0, head.length, 0);
      if (this.fsync) fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      renameSync(this.tmp, this.out);
      this.done = true;
      return size;
    } catch (e) {
      this.abortSync();
      throw e;
    }
  }

  /** Drop everything written: close and delete the temporary file. */
  async abort(): Promise<void> {
    this.abortSync();
  }

  /** abort(), synchronously. */
  abortSync(): void {
    this.done = true;
    this.bufLen = 0;
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = -1;
    }
    if (this.pipe) return;
    try {
      unlinkSync(this.tmp);
    } catch {
      // never created, or already renamed away
    }
  }
}

function writeStdout(b: Uint8Array): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const ok = process.stdout.write(b, (err) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else process.stdout.once('drain', () => resolve());
  });
}
