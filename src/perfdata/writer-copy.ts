import { RecordType, RFC_TEXT_POKE_TYPE } from '../abi/record-type.js';
import { AttrFlag, RFC_TEXT_POKE_ATTR_BIT } from '../abi/event-attr.js';
import { Feature } from '../abi/feature.js';
import { PerfFile, type ReaderOptions } from './perf-file.js';
import type { RawRecord } from './raw-record.js';
import type { PerfRecord } from './records/index.js';
import { canChangeByteOrder, decodeFeatureEntries, type FeatureData } from './features/index.js';
import { PerfDataWriter, type WriterAttr } from './writer.js';

/**
 * Copy a perf.data file through PerfDataWriter, record by record (streamed),
 * optionally dropping records, converting the seed's RFC text pokes to the
 * upstream form, or changing the byte order. Records are copied as raw bytes
 * when nothing about them changes, else decoded and re-encoded.
 */
export interface CopyOptions {
  bigEndian?: boolean;
  /**
   * How to read type 19 in the input (default 'final').
   * With 'rfc', pokes are converted to type 20 and attr bit 32 → 33.
   */
  textPokeAbi?: ReaderOptions['textPokeAbi'];
  /** Return false to drop a record. */
  keep?: (raw: RawRecord) => boolean;
  padRecords?: number;
  /** Called every few thousand records with the input offset reached. */
  progress?: (offset: number, total: number) => void;
}

export interface CopyResult {
  records: number;
  dropped: number;
  converted: number;
}

/** perf's record names for --strip: RecordType keys ("TEXT_POKE"), compared case-insensitively. */
export interface InputInfo {
  attrs: WriterAttr[];
  features: FeatureData[];
  /** The same sections as found in the input (for byte-exact copies when the byte order stays). */
  rawFeatures: { id: number; bytes: Uint8Array }[];
  le: boolean;
  pipe: boolean;
  size: number;
}

/** An opened input: what the writer needs up front, then the records. */
export interface OpenedInput {
  f: PerfFile;
  info: InputInfo;
  records: AsyncGenerator<RawRecord>;
}

function buildInfo(f: PerfFile, featRaw: { id: number; offset: number; bytes: Uint8Array }[]): InputInfo {
  const features = decodeFeatureEntries(featRaw, f.le).map((e) => e.data);
  const ed = features.find((x) => x.kind === 'event_desc');
  const names = ed && ed.kind === 'event_desc' ? ed.events.map((e) => e.name) : [];
  const attrs = f.attrs.map((a, i) => ({ attr: a.attr, ids: a.ids, name: names[i] }));
  const size = f.pipe ? 0 : f.header.data.offset + f.header.data.size;
  return {
    attrs,
    features,
    rawFeatures: featRaw.map((r) => ({ id: r.id, bytes: r.bytes })),
    le: f.le,
    pipe: f.pipe,
    size,
  };
}

/**
 * Open an input in one pass, file or pipe mode (a path, or '-' for stdin).
 * Pipe mode sends attrs and features as records before the data: those
 * leading user records (type ≥ 64) are read and kept (copied) until the first
 * kernel record, so `info` is complete before `records` starts; memory is
 * bounded by that preamble. `compressed` is decided from the byte order.
 */
export async function openInput(
  path: string,
  opts: ReaderOptions,
  compressed: (le: boolean) => 'expand' | 'raw',
): Promise<OpenedInput> {
  const f = await PerfFile.open(path, opts);
  try {
    const mode = compressed(f.le);
    if (!f.pipe) {
      const featRaw = [];
      for (const id of f.header.features)
        featRaw.push({ id, offset: f.featureSection(id)!.offset, bytes: (await f.readFeature(id))! });
      return { f, info: buildInfo(f, featRaw), records: f.records({ compressed: mode }) };
    }
    const it = f.records({ compressed: mode });
    const pre: RawRecord[] = [];
    const featRaw: { id: number; offset: number; bytes: Uint8Array }[] = [];
    let first: IteratorResult<RawRecord> | undefined;
    for (;;) {
      const n = await it.next();
      if (n.done || n.value.type < 64) {
        first = n;
        break;
      }
      const r = n.value;
      if (r.type === RecordType.HEADER_FEATURE) {
        const dv = new DataView(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
        featRaw.push({ id: Number(dv.getBigUint64(8, f.le)), offset: r.fileOffset + 16, bytes: r.bytes.slice(16) });
      }
      pre.push(r.copy());
    }
    async function* rest(): AsyncGenerator<RawRecord> {
      yield* pre;
      if (first && !first.done) {
        yield first.value;
        yield* it;
      }
    }
    return { f, info: buildInfo(f, featRaw), records: rest() };
  } catch (e) {
    await f.close();
    throw e;
  }
}

/** Attrs (with EVENT_DESC names) and decoded features of an input, in file or pipe mode. */
export async function readInputInfo(path: string, opts: ReaderOptions = {}): Promise<InputInfo> {
  const { f, info } = await openInput(path, opts, () => 'raw');
  await f.close();
  return info;
}

/** Attr index of a record's layout; pipe mode learns attrs while reading, so look up lazily. */
export function attrIndexer(f: PerfFile): (layout: unknown) => number | undefined {
  const m = new Map<unknown, number>();
  return (layout) => {
    if (layout === undefined) return undefined;
    let i = m.get(layout);
    if (i === undefined) {
      for (let k = 0; k < f.attrs.length; k++) m.set(f.layoutOf(k), k);
      i = m.get(layout);
    }
    return i;
  };
}

/** Pipe-mode bookkeeping records that file mode keeps in the header instead. */
const PIPE_ONLY = new Set<number>([RecordType.HEADER_ATTR, RecordType.HEADER_EVENT_TYPE, RecordType.HEADER_FEATURE]);

export async function copyPerfData(input: string, output: string, opts: CopyOptions = {}): Promise<CopyResult> {
  const rfc = opts.textPokeAbi === 'rfc';
  const outLe = !opts.bigEndian;
  const expandFor = (le: boolean) => le !== outLe || rfc || !!opts.keep || !!opts.padRecords;
  const { f, info, records } = await openInput(input, { textPokeAbi: opts.textPokeAbi }, (le) =>
    expandFor(le) ? 'expand' : 'raw',
  );
  const swap = outLe !== info.le;
  const expand = expandFor(info.le);
  const attrs = info.attrs.map((a) => {
    let flags = a.attr.flags;
    if (rfc && (flags >> BigInt(RFC_TEXT_POKE_ATTR_BIT)) & 1n) {
      // the seed's bit 32 is upstream's cgroup; the final ABI's text_poke is bit 33
      flags = (flags & ~(1n << BigInt(RFC_TEXT_POKE_ATTR_BIT))) | (1n << BigInt(AttrFlag.text_poke));
    }
    return { ...a, attr: { ...a.attr, flags } };
  });
  const features = info.features
    .map((ft, i): FeatureData => {
      // same byte order: copy the section's bytes exactly (old perf's string padding, odd bytes and all)
      const raw = info.rawFeatures[i]!;
      return swap ? ft : { kind: 'raw', id: raw.id, bytes: raw.bytes };
    })
    .filter((ft, i) => {
      const kind = info.features[i]!.kind;
      if (expand && kind === 'compressed') return false; // we write the records unpacked, as perf inject does
      if (kind === 'event_desc') return false; // regenerated from the attrs as written
      return !swap || canChangeByteOrder(ft);
    });
  const res: CopyResult = { records: 0, dropped: 0, converted: 0 };
  let writer: PerfDataWriter | undefined;
  try {
    writer = await PerfDataWriter.create(output, attrs, {
      bigEndian: opts.bigEndian,
      features,
      padRecords: opts.padRecords,
    });
    const layoutIndex = attrIndexer(f);
    let n = 0;
    for await (const raw of records) {
      if (++n % 4096 === 0) opts.progress?.(raw.fileOffset, info.size);
      if (PIPE_ONLY.has(raw.type)) continue; // the writer writes its own attrs and features
      if (opts.keep && !opts.keep(raw)) {
        res.dropped++;
        continue;
      }
      res.records++;
      const attrIndex = layoutIndex(raw.layout) ?? 0;
      const isRfcPoke = rfc && raw.type === RFC_TEXT_POKE_TYPE;
      if (!swap && !isRfcPoke) {
        if (raw.type === RecordType.SAMPLE) {
          const t = raw.timestamp();
          if (t !== undefined) writer.noteSampleTime(t);
        }
        const trailer = raw.layout && raw.type < 64 && raw.type !== RecordType.SAMPLE ? raw.layout.trailerSize : 0;
        await writer.writeBytes(raw.bytes, raw.auxData, trailer);
        continue;
      }
      let rec: PerfRecord = raw.decode();
      if (isRfcPoke && rec.kind === 'text_poke' && rec.abi === 'rfc') {
        const { abi: _abi, len, ...rest } = rec;
        rec = { ...rest, type: RecordType.TEXT_POKE, oldLen: len, newLen: len };
        res.converted++;
      }
      await writer.write(rec, attrIndex, raw.auxData);
    }
    await writer.finish();
  } catch (e) {
    await writer?.abort();
    throw e;
  } finally {
    await f.close();
  }
  return res;
}

export { Feature };
