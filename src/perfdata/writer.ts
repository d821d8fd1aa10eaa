import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import os from 'node:os';
import { ByteWriter } from '../io/byte-writer.js';
import { Feature } from '../abi/feature.js';
import { RecordType } from '../abi/record-type.js';
import { PERF_ATTR_SIZE_VER0, type EventAttr } from '../abi/event-attr.js';
import { encodeEventAttr } from './event-attr-codec.js';
import { encodeFileHeader, encodePipeHeader, PERF_FILE_HEADER_SIZE } from './file-header.js';
import { attrLayout, calcIdPos, calcIsPos, type AttrLayout } from './layout.js';
import { encodeRecord, hasSampleIdTrailer, type PerfRecord } from './records/index.js';
import { encodeFeature, featureIdOf, type FeatureData, type AuxtraceIndexEntry } from './features/index.js';

/**
 * PerfDataWriter: writes perf.data the way perf record/inject lay it out,
 *
 *   perf_file_header (104) | ids of every attr | perf_file_attr[] | data … |
 *   feature section table | feature sections
 *
 * streaming the data section (records are appended as they come, through a
 * 1 MiB buffer) and patching the header when `finish()` knows the sizes.
 * Output goes to `<out>.tmp-<pid>` beside the target and is renamed at the
 * end; `abort()` (or any failure in finish) removes it and leaves an existing
 * output untouched. `out === '-'` writes pipe mode to stdout: pipe header,
 * HEADER_ATTR and HEADER_FEATURE records, then the records.
 *
 * AUXTRACE records (type 71) carry their trace payload after the record; the
 * writer notes each one's output offset and size (record + payload), and
 * finish() writes that as the AUXTRACE feature — perf's intel_pt decoder
 * finds the trace through it, so it must describe the output, not the input.
 */
export interface WriterAttr {
  attr: EventAttr;
  ids: bigint[];
  name?: string;
}

export interface PerfDataWriterOptions {
  /** Write a big-endian file (default: little-endian). */
  bigEndian?: boolean;
  /** Feature sections to write (copied from an input, or made by hand); the basics are generated when missing. */
  features?: FeatureData[];
  /**
   * Test only: grow every kernel record by this many junk bytes (multiple of 8),
   * placed before the sample_id trailer, to prove readers honour header.size.
   */
  padRecords?: number;
}

/** perf 6.1's sizeof(struct perf_event_attr): larger attrs make it refuse the file. */
const PERF61_ATTR_SIZE = 128;
const FLUSH_AT = 1 << 20;

interface Sink {
  write(b: Uint8Array): Promise<void>;
}

export class PerfDataWriter {
  readonly le: boolean;
  readonly pipe: boolean;
  readonly attrs: WriterAttr[];
  /** Output layouts, one per attr (sample fields, sample_id trailer). */
  readonly layouts: AttrLayout[];
  private readonly out: string;
  private readonly tmp: string;
  private fh: FileHandle | undefined;
  private readonly features = new Map<number, FeatureData>();
  private readonly attrSize: number;
  private readonly dataOffset: number;
  private readonly pad: number;
  private buf = new Uint8Array(FLUSH_AT);
  private bufLen = 0;
  /** Where the next write to the temporary file goes. */
  private filePos = 0;
  private readonly auxIndex: AuxtraceIndexEntry[] = [];
  private sawAuxtrace = false;
  private firstSample: bigint | undefined;
  private lastSample: bigint | undefined;
  private done = false;
  private readonly sink: Sink;
  private readonly idToAttr = new Map<bigint, number>();

  private constructor(out: string, attrs: WriterAttr[], opts: PerfDataWriterOptions) {
    this.out = out;
    this.pipe = out === '-';
    this.tmp = this.pipe ? '' : join(dirname(out), `${basename(out)}.tmp-${process.pid}`);
    this.le = !opts.bigEndian;
    this.pad = opts.padRecords ?? 0;
    if (this.pad % 8 !== 0) throw new Error('padRecords must be a multiple of 8');
    // perf reads each attr as attr.size bytes and steps by attr_size: make them one size
    const maxSize = Math.max(PERF_ATTR_SIZE_VER0, ...attrs.map((a) => a.attr.size || PERF_ATTR_SIZE_VER0));
    const needBig = attrs.some((a) => a.attr.config3 !== 0n);
    const size = needBig ? Math.max(maxSize, 136) : Math.min(Math.max(maxSize, PERF_ATTR_SIZE_VER0), PERF61_ATTR_SIZE);
    this.attrs = attrs.map((a) => ({ ...a, attr: { ...a.attr, size } }));
    this.attrSize = size;
    this.layouts = this.attrs.map((a) => attrLayout(a.attr, this.le));
    this.attrs.forEach((a, i) => a.ids.forEach((id) => this.idToAttr.has(id) || this.idToAttr.set(id, i)));
    const nIds = this.attrs.reduce((n, a) => n + a.ids.length, 0);
    this.dataOffset = PERF_FILE_HEADER_SIZE + 8 * nIds + this.attrs.length * (size + 16);
    for (const f of opts.features ?? []) this.features.set(featureIdOf(f), f);
    this.checkSampleTypes();
    this.addDefaultFeatures();
    this.sink = this.pipe ? stdoutSink() : { write: (b) => this.writeFile(b) };
  }

  /**
   * Create the writer (and the temporary output file). Throws on I/O errors;
   * nothing is left behind then.
   */
  static async create(out: string, attrs: WriterAttr[], opts: PerfDataWriterOptions = {}): Promise<PerfDataWriter> {
    const w = new PerfDataWriter(out, attrs, opts);
    if (w.pipe) await w.startPipe();
    else await w.startFile();
    return w;
  }

  /** The attr index of a sample/record id (first attr when unknown). */
  attrIndexForId(id: bigint | undefined): number {
    return id === undefined ? 0 : (this.idToAttr.get(id) ?? 0);
  }

  setFeature(f: FeatureData): void {
    this.features.set(featureIdOf(f), f);
  }

  /**
   * perf's evlist__valid_sample_type: with several attrs every sample must
   * carry its id at the same place (ID or IDENTIFIER in every sample_type), or
   * perf refuses the file ("non matching sample_type"). perf stat files (STAT) are exempt.
   */
  private checkSampleTypes(): void {
    if (this.attrs.length < 2 || this.features.has(Feature.STAT)) return;
    const pos = this.attrs.map((a) => [calcIdPos(a.attr.sampleType), calcIsPos(a.attr.sampleType)]);
    const [id0, is0] = pos[0]!;
    if (id0! < 0 || is0! < 0 || pos.some(([i, s]) => i !== id0 || s !== is0)) {
      throw new Error(
        'PerfDataWriter: with several attrs every sample_type needs ID or IDENTIFIER at the same position (perf refuses the file otherwise: "non matching sample_type")',
      );
    }
  }

  private addDefaultFeatures(): void {
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

  private async startFile(): Promise<void> {
    this.fh = await open(this.tmp, 'w');
    try {
      const w = new ByteWriter(this.le, this.dataOffset);
      w.zeros(PERF_FILE_HEADER_SIZE); // patched by finish()
      const idOffsets: number[] = [];
      for (const a of this.attrs) {
        idOffsets.push(w.pos);
        for (const id of a.ids) w.u64(id);
      }
      this.attrs.forEach((a, i) => {
        encodeEventAttr(w, a.attr, this.attrSize);
        w.u64(idOffsets[i]!).u64(8 * a.ids.length);
      });
      await this.sink.write(w.finish());
    } catch (e) {
      await this.abort();
      throw e;
    }
  }

  private async startPipe(): Promise<void> {
    const w = new ByteWriter(this.le, 4096);
    encodePipeHeader(w);
    for (const a of this.attrs) {
      encodeRecord(
        {
          kind: 'header_attr',
          type: RecordType.HEADER_ATTR,
          misc: 0,
          size: 0,
          fileOffset: 0,
          attr: a.attr,
          ids: a.ids,
        },
        w,
      );
    }
    for (const [id, f] of [...this.features].sort((x, y) => x[0] - y[0])) {
      if (id === Feature.BUILD_ID || id === Feature.AUXTRACE || id === Feature.TRACING_DATA) continue; // file-mode only (perf: not synthesized in pipe mode)
      const data = encodeFeature(f, this.le);
      if (data.length + 16 > 0xffff) continue;
      encodeRecord(
        { kind: 'header_feature', type: RecordType.HEADER_FEATURE, misc: 0, size: 0, fileOffset: 0, featId: id, data },
        w,
      );
    }
    const td = this.features.get(Feature.TRACING_DATA);
    if (td && td.kind === 'raw' && td.bytes.length) {
      // pipe mode carries the tracepoint formats as a HEADER_TRACING_DATA record followed by the data, 8-aligned
      const size = Math.ceil(td.bytes.length / 8) * 8;
      encodeRecord(
        { kind: 'tracing_data', type: RecordType.HEADER_TRACING_DATA, misc: 0, size: 0, fileOffset: 0, dataSize: size },
        w,
      );
      w.bytes(td.bytes).zeros(size - td.bytes.length);
    }
    await this.sink.write(w.finish().slice());
  }

  private async writeFile(b: Uint8Array): Promise<void> {
    let done = 0;
    while (done < b.length) {
      const { bytesWritten } = await this.fh!.write(b, done, b.length - done, this.filePos);
      done += bytesWritten;
      this.filePos += bytesWritten;
    }
  }

  /** Append to the output buffer (one copy, no per-record allocation); flushes when full. */
  private async push(b: Uint8Array): Promise<void> {
    if (this.bufLen + b.length > this.buf.length) await this.flush();
    if (b.length > this.buf.length) {
      await this.sink.write(this.pipe ? b.slice() : b);
      return;
    }
    this.buf.set(b, this.bufLen);
    this.bufLen += b.length;
  }

  private async flush(): Promise<void> {
    if (!this.bufLen) return;
    // the pipe sink may hold the buffer until the stream drains: give it its own copy
    const out = this.pipe ? this.buf.slice(0, this.bufLen) : this.buf.subarray(0, this.bufLen);
    this.bufLen = 0;
    await this.sink.write(out);
  }

  /** Offset the next record will get in the output (for callers that index records). */
  get offset(): number {
    return (this.pipe ? 0 : this.dataOffset) + this.dataBytes;
  }
  private dataBytes = 0;

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
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const type = dv.getUint32(0, this.le);
    if (type === RecordType.HEADER_TRACING_DATA && !this.pipe) {
      // file mode keeps the tracepoint formats in the TRACING_DATA feature (perf refuses tracepoint attrs without it)
      this.features.set(Feature.TRACING_DATA, {
        kind: 'raw',
        id: Feature.TRACING_DATA,
        bytes: (payload ?? new Uint8Array(0)).slice(),
      });
      return;
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
    await this.push(bytes);
    if (payload && payload.length) {
      this.dataBytes += payload.length;
      await this.push(payload);
    }
  }

  /**
   * Write the features and the header, close, rename into place. On failure
   * the temporary file is removed and the error rethrown.
   */
  async finish(): Promise<void> {
    if (this.done) return;
    try {
      await this.flush();
      if (this.pipe) {
        this.done = true;
        return;
      }
      if (this.sawAuxtrace || this.features.has(Feature.AUXTRACE))
        this.features.set(Feature.AUXTRACE, { kind: 'auxtrace', entries: this.auxIndex });
      if (this.features.has(Feature.SAMPLE_TIME) && this.firstSample !== undefined) {
        this.features.set(Feature.SAMPLE_TIME, {
          kind: 'sample_time',
          first: this.firstSample,
          last: this.lastSample!,
        });
      }
      const ids = [...this.features.keys()].sort((a, b) => a - b);
      const tableAt = this.dataOffset + this.dataBytes;
      const bodies = ids.map((id) => encodeFeature(this.features.get(id)!, this.le));
      const w = new ByteWriter(this.le, 4096);
      let at = tableAt + 16 * ids.length;
      for (const b of bodies) {
        w.u64(at).u64(b.length);
        at += b.length;
      }
      for (const b of bodies) w.bytes(b);
      await this.sink.write(w.finish().slice());
      const h = new ByteWriter(this.le, PERF_FILE_HEADER_SIZE);
      const nIds = this.attrs.reduce((n, a) => n + a.ids.length, 0);
      const attrsAt = PERF_FILE_HEADER_SIZE + 8 * nIds;
      encodeFileHeader(h, {
        attrSize: this.attrSize + 16,
        attrs: { offset: attrsAt, size: this.attrs.length * (this.attrSize + 16) },
        data: { offset: this.dataOffset, size: this.dataBytes },
        eventTypes: { offset: 0, size: 0 },
        features: ids,
      });
      const hb = h.finish();
      await this.fh!.write(hb, 0, hb.length, 0);
      await this.fh!.close();
      this.fh = undefined;
      await rename(this.tmp, this.out);
      this.done = true;
    } catch (e) {
      await this.abort();
      throw e;
    }
  }

  /** Drop everything written: close and delete the temporary file. */
  async abort(): Promise<void> {
    this.done = true;
    this.bufLen = 0;
    if (this.fh) {
      await this.fh.close().catch(() => undefined);
      this.fh = undefined;
    }
    if (!this.pipe) await unlink(this.tmp).catch(() => undefined);
  }
}

function stdoutSink(): Sink {
  return {
    write: (b) =>
      new Promise<void>((resolve, reject) => {
        const ok = process.stdout.write(b, (err) => (err ? reject(err) : undefined));
        if (ok) resolve();
        else process.stdout.once('drain', () => resolve());
      }),
  };
}
