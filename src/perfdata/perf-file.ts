import { open, type FileHandle } from 'node:fs/promises';
import { ByteReader } from '../io/byte-reader.js';
import { FormatError, isFormatError } from '../io/errors.js';
import { wrappedCompressed2Size } from './records/compressed.js';
import { RecordType } from '../abi/record-type.js';
import type { EventAttr } from '../abi/event-attr.js';
import { decodeEventAttr } from './event-attr-codec.js';
import {
  decodeFileHeader,
  decodePipeHeader,
  PERF_FILE_HEADER_SIZE,
  type FileHeader,
  type FileSection,
} from './file-header.js';
import { attrLayout, type AttrLayout } from './layout.js';
import { RawRecord } from './raw-record.js';
import { Window, streamFill, fileFill, DEFAULT_WINDOW } from './window.js';
import { decodeHeaderAttr, decodeIdIndex, structureName } from './records/index.js';
import { featureName, Feature } from '../abi/feature.js';
import { decodeFeature } from './features/codec.js';
import { describeFsError, perfDataPath } from './input-path.js';
import { Decompressor } from './decompressor.js';
import { changesReading, readTrailingPayload, skipTrailingPayload, takeOrdinary } from './record-batches.js';
import type { RecordsOptions } from './record-batches.js';

export type { RecordsOptions } from './record-batches.js';

export interface ReaderOptions {
  /** How to read type 19: 'final' (upstream: CGROUP) or 'rfc' (the seed's TEXT_POKE). Default 'final'. */
  textPokeAbi?: 'final' | 'rfc';
  /** Window size in bytes (default 4 MiB). */
  windowSize?: number;
  /**
   * 'defer': a feature table or section outside the file, or a data section
   * past the end, does not stop `open` (perf reads the records anyway): the
   * error is kept in `damage` for the caller to report after the records.
   */
  damage?: 'throw' | 'defer';
}

export interface AttrEntry {
  attr: EventAttr;
  ids: bigint[];
  /** Event name, when known (filled by higher layers from EVENT_DESC). */
  name?: string;
}

/**
 * A perf.data file or stream: file mode (PERFILE2 header, attrs, data, feature
 * sections) or pipe mode (`perf record -o -`: everything inline as records).
 *
 *   const f = await PerfFile.open('perf.data');
 *   for await (const r of f.records()) if (r.type === 20) console.log(r.decode());
 *   await f.close();
 *
 * Every malformed input throws FormatError naming the offset (and file).
 */
export class PerfFile {
  readonly path: string;
  readonly header: FileHeader;
  readonly le: boolean;
  readonly pipe: boolean;
  readonly attrs: AttrEntry[] = [];
  /** Feature sections of a file-mode file (id → section), from the table after the data section. */
  readonly features = new Map<number, FileSection>();
  /** COMPRESSED / COMPRESSED2 records expanded so far, by type (their contents replace them in `records()`). */
  readonly compressedCounts = new Map<number, number>();
  /** With `damage: 'defer'`: the damage `open` met outside the records (sections before it are kept). */
  damage: FormatError | undefined;
  /** Pipe mode: HEADER_FEATURE bodies seen so far. */
  private readonly pipeFeatures = new Map<number, Uint8Array>();
  readonly textPokeAbi: 'final' | 'rfc';
  private readonly windowSize: number;
  private layouts: AttrLayout[] = [];
  private idToAttr = new Map<bigint, number>();
  /** idToAttr for ids < 2^32, keyed by number (layoutFor reads those without a bigint). */
  private smallIds = new Map<number, number>();
  private fh: FileHandle | undefined;
  private fileSize: number;
  private stream: NodeJS.ReadableStream | undefined;
  private streamConsumed = false;
  /** The pipe's window (pipe mode reads the stream once, continuing after the 16-byte header). */
  private pipeWindow: Window | undefined;

  private constructor(path: string, header: FileHeader, fileSize: number, opts: ReaderOptions) {
    this.path = path;
    this.header = header;
    this.le = header.le;
    this.pipe = header.pipe;
    this.fileSize = fileSize;
    this.textPokeAbi = opts.textPokeAbi ?? 'final';
    this.windowSize = opts.windowSize ?? DEFAULT_WINDOW;
  }

  /**
   * Open a file (file mode, or a pipe-mode file starting with magic + size 16); '-' reads stdin in pipe mode.
   * Throws FormatError (with the file name) for a malformed header, attrs or feature table.
   */
  static async open(path: string, opts: ReaderOptions = {}): Promise<PerfFile> {
    if (path === '-') return PerfFile.fromStream(process.stdin, opts, '-');
    path = perfDataPath(path); // a `perf record --kcore` directory: its data file
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      throw describeFsError(path, e) ?? e;
    }
    try {
      const size = (await fh.stat()).size;
      const first = new Uint8Array(Math.min(size, PERF_FILE_HEADER_SIZE));
      await fh.read(first, 0, first.length, 0);
      const defer = opts.damage === 'defer';
      let header: FileHeader;
      let damage: FormatError | undefined;
      try {
        header = decodeFileHeader(first, size);
      } catch (e) {
        // offset 40: the data section runs past the end; its records up to the cut still read
        if (!defer || !isFormatError(e) || e.offset !== 40) throw e;
        header = decodeFileHeader(first);
        damage = e.withFile(path);
      }
      const f = new PerfFile(path, header, size, opts);
      f.fh = fh;
      f.damage = damage;
      if (!header.pipe) {
        try {
          await f.readFileModeTables();
        } catch (e) {
          if (!defer || !isFormatError(e) || !e.info.structure.startsWith('feature section')) throw e;
          f.damage ??= e.withFile(path);
        }
      }
      return f;
    } catch (e) {
      await fh.close();
      throw isFormatError(e) ? e.withFile(path) : e;
    }
  }

  /** Pipe mode from a stream (`perf record -o - | …`). */
  static async fromStream(s: NodeJS.ReadableStream, opts: ReaderOptions = {}, name = '-'): Promise<PerfFile> {
    const fill = streamFill(s);
    const w = new Window(fill, 0, Infinity, opts.windowSize ?? DEFAULT_WINDOW, 'perf pipe header');
    try {
      if (!(await w.ensure(16, 'perf pipe header'))) {
        throw new FormatError({
          kind: 'truncated',
          offset: 0,
          structure: 'perf pipe header',
          expected: '16 bytes',
          actual: 'empty input',
        });
      }
      const header = decodePipeHeader(w.peek(16));
      w.advance(16);
      const f = new PerfFile(name, header, Infinity, opts);
      f.stream = s;
      f.pipeWindow = w;
      return f;
    } catch (e) {
      throw isFormatError(e) ? e.withFile(name) : e;
    }
  }

  private async readAt(offset: number, len: number): Promise<Uint8Array> {
    const b = new Uint8Array(len);
    const { bytesRead } = await this.fh!.read(b, 0, len, offset);
    if (bytesRead < len)
      throw new FormatError({
        kind: 'truncated',
        offset: offset + bytesRead,
        structure: 'file',
        expected: `${len} bytes at 0x${offset.toString(16)}`,
      });
    return b;
  }

  private async readFileModeTables(): Promise<void> {
    const h = this.header;
    const n = h.attrSize > 0 ? Math.floor(h.attrs.size / h.attrSize) : 0;
    const attrBytes = await this.readAt(h.attrs.offset, h.attrs.size);
    const r = new ByteReader(attrBytes, this.le, h.attrs.offset, 'perf_file_attr');
    for (let i = 0; i < n; i++) {
      r.seek(i * h.attrSize);
      const attr = decodeEventAttr(r, h.attrSize - 16);
      const idsAt = h.attrs.offset + r.pos;
      const idsOff = r.u64n('perf_file_attr.ids');
      const idsSize = r.u64n('perf_file_attr.ids');
      if (idsOff + idsSize > this.fileSize || idsSize % 8 !== 0) {
        throw new FormatError({
          kind: 'bad-size',
          offset: idsAt,
          structure: 'perf_file_attr.ids',
          actual: `0x${idsOff.toString(16)}+0x${idsSize.toString(16)}`,
          expected: `a multiple of 8 within the file (0x${this.fileSize.toString(16)} bytes)`,
        });
      }
      const ids: bigint[] = [];
      if (idsSize) {
        const ib = new ByteReader(await this.readAt(idsOff, idsSize), this.le, idsOff, 'ids');
        for (let k = 0; k < idsSize / 8; k++) ids.push(ib.u64());
      }
      this.addAttr({ attr, ids });
    }
    // feature section table: one perf_file_section per set bit, right after the data section
    const tableAt = h.data.offset + h.data.size;
    if (h.features.length) {
      const need = h.features.length * 16;
      if (tableAt + need > this.fileSize) {
        throw new FormatError({
          kind: 'truncated',
          offset: tableAt,
          structure: 'feature section table',
          expected: `${need} bytes (${h.features.length} sections)`,
          actual: `${Math.max(0, this.fileSize - tableAt)} bytes`,
        });
      }
      const tr = new ByteReader(await this.readAt(tableAt, need), this.le, tableAt, 'feature section table');
      for (const id of h.features) {
        const at = tr.base + tr.pos;
        const s = { offset: tr.u64n(), size: tr.u64n() };
        if (s.offset + s.size > this.fileSize) {
          throw new FormatError({
            kind: 'bad-size',
            offset: at,
            structure: `feature section ${featureName(id)}`,
            actual: `0x${s.offset.toString(16)}+0x${s.size.toString(16)}`,
            expected: `within the file (0x${this.fileSize.toString(16)} bytes)`,
          });
        }
        this.features.set(id, s);
      }
    }
    const desc = this.features.get(Feature.EVENT_DESC);
    if (desc) this.nameAttrs(await this.readAt(desc.offset, desc.size), desc.offset);
  }

  /**
   * Event names from HEADER_EVENT_DESC (matched by id, else by position). The
   * name is optional: a malformed section leaves names unset (perfpoke header
   * reports it) rather than stopping the records.
   */
  private nameAttrs(bytes: Uint8Array, base: number): void {
    let f: ReturnType<typeof decodeFeature>;
    try {
      f = decodeFeature(Feature.EVENT_DESC, bytes, this.le, base);
    } catch {
      return; // names are optional; the features decoder reports a bad section itself
    }
    if (f.kind !== 'event_desc') return;
    f.events.forEach((ev, i) => {
      const byId = ev.ids.length ? this.attrForId(ev.ids[0]!) : undefined;
      const a = byId ?? this.attrs[i];
      if (a && a.name === undefined) a.name = ev.name;
    });
  }

  private addAttr(a: AttrEntry): void {
    const i = this.attrs.length;
    this.attrs.push(a);
    this.layouts.push(attrLayout(a.attr, this.le));
    for (const id of a.ids) if (!this.idToAttr.has(id)) this.setId(id, i);
  }

  private setId(id: bigint, i: number): void {
    this.idToAttr.set(id, i);
    if (id < 0x100000000n) this.smallIds.set(Number(id), i);
  }

  /** The attr entry that produced sample/record id `id` (attr ids, then ID_INDEX). */
  attrForId(id: bigint): AttrEntry | undefined {
    const i = this.idToAttr.get(id);
    return i === undefined ? undefined : this.attrs[i];
  }

  /** The layout (precomputed offsets) of attrs[i]. */
  layoutOf(i: number): AttrLayout | undefined {
    return this.layouts[i];
  }

  featureSection(id: number): FileSection | undefined {
    return this.features.get(id);
  }

  /** Raw bytes of a feature section (pipe mode: from HEADER_FEATURE records seen so far). */
  async readFeature(id: number): Promise<Uint8Array | undefined> {
    if (this.pipe) return this.pipeFeatures.get(id);
    const s = this.features.get(id);
    if (!s) return undefined;
    try {
      return await this.readAt(s.offset, s.size);
    } catch (e) {
      throw isFormatError(e) ? e.withFile(this.path) : e;
    }
  }

  /**
   * perf's evlist__event2evsel: which attr a record belongs to. One attr: it.
   * Otherwise the id at the first attr's id_pos (SAMPLE) or is_pos counted from
   * the end (other kernel records with sample_id_all); id 0 or unknown: the first.
   * The record is bytes[at .. at + size).
   */
  layoutFor(bytes: Uint8Array, type: number, size: number, at = 0): AttrLayout | undefined {
    const L = this.layouts;
    if (L.length <= 1) return L[0];
    const first = L[0]!;
    if (type >= 64) return first;
    if (type !== RecordType.SAMPLE && !first.sampleIdAll) return first;
    const n = (size - 8) >> 3;
    let off: number;
    if (type === RecordType.SAMPLE) {
      if (first.idPos < 0 || first.idPos >= n) return first;
      off = at + 8 + first.idPos * 8;
    } else {
      if (first.isPos < 0 || first.isPos > n) return first;
      off = at + 8 + (n - first.isPos) * 8;
    }
    // ids are small in practice: look them up by number, without a DataView or a bigint per record
    const b = bytes;
    const o = this.le ? off : off + 4; // the low half
    const lo = this.le
      ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0
      : ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
    const h = this.le ? off + 4 : off;
    if ((b[h]! | b[h + 1]! | b[h + 2]! | b[h + 3]!) === 0) {
      if (lo === 0) return first;
      const i = this.smallIds.get(lo);
      if (i !== undefined) return L[i];
      return first;
    }
    const id = new DataView(bytes.buffer, bytes.byteOffset + off, 8).getBigUint64(0, this.le);
    const i = this.idToAttr.get(id);
    return i === undefined ? first : L[i];
  }

  /**
   * Records in file order, streamed through a fixed window (never the whole file).
   * Pipe mode also fills `attrs` (HEADER_ATTR), features (HEADER_FEATURE) and ids (ID_INDEX) as they
   * pass — after the record is yielded, as perf dumps a record before processing it. Streams read once.
   * Throws FormatError (with file name) at the first malformed record header.
   */
  async *records(opts: RecordsOptions = {}): AsyncGenerator<RawRecord> {
    for await (const batch of this.recordBatches(opts)) yield* batch;
  }

  /**
   * `records()` in arrays (a promise per batch, not per record). Window views stay valid until the next
   * batch is asked for: a batch ends before every refill and after every record `observe` learns from
   * (applied when the next batch is asked for). Malformed input: the records before it, then the error.
   */
  async *recordBatches(opts: RecordsOptions = {}): AsyncGenerator<RawRecord[]> {
    let w: Window;
    if (this.stream) {
      if (this.streamConsumed) throw new Error('PerfFile.records(): a stream can be read once');
      this.streamConsumed = true;
      w = this.pipeWindow!;
    } else if (this.pipe) {
      const from = opts.from ?? 16;
      w = new Window(
        fileFill(this.fh!, from, this.fileSize),
        from,
        this.fileSize,
        this.windowSize,
        'perf_event_header',
      );
      w.region = 'file';
    } else {
      const h = this.header;
      const end = h.data.offset + h.data.size;
      const from = opts.from ?? h.data.offset;
      w = new Window(fileFill(this.fh!, from, this.fileSize), from, end, this.windowSize, 'perf_event_header');
    }
    const mode = opts.compressed ?? 'expand';
    const expand = mode !== 'raw';
    const unpack = new Decompressor(this);
    const batch: RawRecord[] = [];
    const take = opts.take ?? takeOrdinary;
    try {
      for (;;) {
        if (take(w, batch, this)) {
          yield batch.splice(0); // full
          continue;
        }
        // a refill may move the window's bytes: hand out the views taken so far first
        if (w.available < 8) {
          if (batch.length) yield batch.splice(0);
          if (!(await w.ensure(8, 'perf_event_header'))) break;
        }
        const at = w.pos;
        const type = w.u32At(0, this.le);
        let size = w.u16At(6, this.le);
        if (size === 0 && type === RecordType.COMPRESSED2) {
          if (w.available < 16 && batch.length) yield batch.splice(0);
          if (await w.ensure(16, 'COMPRESSED2 (83)')) size = wrappedCompressed2Size(w.peek(16), this.le) ?? 0;
        }
        if (size < 8) {
          throw new FormatError({
            kind: 'bad-size',
            offset: at,
            structure: `${structureName(type)} perf_event_header.size`,
            actual: size,
            expected: '≥ 8 (a record cannot be shorter than its header)',
          });
        }
        if (w.available < size) {
          if (batch.length) yield batch.splice(0);
          await w.ensure(size, structureName(type));
        }
        const { array: buf, offset: off } = w;
        const layout = this.layoutFor(buf, type, size, off);
        let raw = new RawRecord(buf, at, this.le, layout, this.textPokeAbi, 0, off, size);
        w.advance(size);
        if (type === RecordType.AUXTRACE || type === RecordType.HEADER_TRACING_DATA) {
          // reading the payload slides the window under raw.bytes: detach it first
          raw = raw.copy();
          if (batch.length) yield batch.splice(0);
          if (opts.auxData === false && type === RecordType.AUXTRACE) await skipTrailingPayload(w, raw);
          else raw.auxData = await readTrailingPayload(w, raw);
        }
        if ((type === RecordType.COMPRESSED || type === RecordType.COMPRESSED2) && expand) {
          this.compressedCounts.set(type, (this.compressedCounts.get(type) ?? 0) + 1);
          if (mode === 'both') batch.push(raw);
          for (const inner of unpack.push(raw)) {
            batch.push(inner);
            if (changesReading(inner.type)) {
              yield batch.splice(0);
              this.observe(inner);
            }
          }
        } else {
          // like perf, the record is seen (dumped) before it is processed: attrs,
          // features and ids it carries apply from the next record on
          batch.push(raw);
          if (changesReading(type)) {
            yield batch.splice(0);
            this.observe(raw);
          }
        }
      }
      if (batch.length) yield batch.splice(0);
      unpack.finish();
    } catch (e) {
      // what was read before the error is delivered first, as one record at a time would be
      if (batch.length) yield batch.splice(0);
      throw isFormatError(e) ? e.withFile(this.path) : e;
    }
  }

  /** Learn attrs, features and ids from pipe-mode records once the consumer has seen them. */
  private observe(raw: RawRecord): void {
    if (raw.type === RecordType.HEADER_ATTR) {
      const rec = decodeHeaderAttr(
        new ByteReader(raw.bytes.subarray(8), this.le, raw.fileOffset + 8, 'HEADER_ATTR (64)'),
        { type: raw.type, misc: raw.misc, size: raw.size, fileOffset: raw.fileOffset },
      );
      this.addAttr({ attr: rec.attr, ids: rec.ids });
    } else if (raw.type === RecordType.HEADER_FEATURE && this.pipe) {
      const r = new ByteReader(raw.bytes.subarray(8), this.le, raw.fileOffset + 8, 'HEADER_FEATURE (80)');
      const id = r.u64n('HEADER_FEATURE (80).feat_id');
      const data = r.copy(r.remaining);
      this.pipeFeatures.set(id, data);
      if (id === Feature.EVENT_DESC) this.nameAttrs(data, raw.fileOffset + 16);
    } else if (raw.type === RecordType.EVENT_UPDATE && raw.size >= 24) {
      // EVENT_UPDATE NAME (type 2): perf names pipe-mode events this way
      const dv = new DataView(raw.bytes.buffer, raw.bytes.byteOffset, raw.size);
      if (dv.getBigUint64(8, this.le) === 2n) {
        const a = this.attrForId(dv.getBigUint64(16, this.le));
        const r = new ByteReader(raw.bytes.subarray(24), this.le, raw.fileOffset + 24, 'EVENT_UPDATE (78).name');
        if (a) a.name = r.cstring();
      }
    } else if (raw.type === RecordType.ID_INDEX) {
      const rec = decodeIdIndex(new ByteReader(raw.bytes.subarray(8), this.le, raw.fileOffset + 8, 'ID_INDEX (69)'), {
        type: raw.type,
        misc: raw.misc,
        size: raw.size,
        fileOffset: raw.fileOffset,
      });
      for (const e of rec.entries) {
        const idx = Number(e.idx);
        if (!this.idToAttr.has(e.id) && idx < this.attrs.length) this.setId(e.id, idx);
      }
    }
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    if (fh) await fh.close();
  }
}
