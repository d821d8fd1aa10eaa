/**
 * The bytes PerfDataWriter puts around the data section, as perf's
 * perf_session__write_header lays a file out:
 *
 *   0     perf_file_header (104)         written last (sizes known at the end)
 *   104   ids of attr 0, attr 1, …       u64 each
 *   …     perf_file_attr[]               attr (attr_size) + ids section (16)
 *   …     data                           records, streamed as they come
 *   …     feature table                  perf_file_section per set bit, ascending
 *   …     feature bodies
 *
 * and the preamble of pipe mode (pipe header, HEADER_ATTR, HEADER_FEATURE and
 * HEADER_TRACING_DATA records). No other module lays these parts out.
 */
import { ByteWriter } from '../io/byte-writer.js';
import { Feature } from '../abi/feature.js';
import { RecordType } from '../abi/record-type.js';
import { PERF_ATTR_SIZE_VER0, type EventAttr } from '../abi/event-attr.js';
import { encodeEventAttr } from './event-attr-codec.js';
import { encodeFileHeader, encodePipeHeader, PERF_FILE_HEADER_SIZE } from './file-header.js';
import { calcIdPos, calcIsPos } from './layout.js';
import { encodeRecord } from './records/index.js';
import { encodeFeature, type FeatureData } from './features/index.js';

export interface WriterAttr {
  attr: EventAttr;
  ids: bigint[];
  name?: string;
}

/** perf 6.1's sizeof(struct perf_event_attr): larger attrs make it refuse the file. */
const PERF61_ATTR_SIZE = 128;
/** perf_file_section: u64 offset, u64 size. */
const FILE_SECTION_SIZE = 16;

/**
 * perf reads each attr as attr.size bytes and steps by attr_size: give every
 * attr one size, the largest asked for, capped at perf 6.1's unless config3
 * (which only larger attrs hold) is in use.
 */
export function sizeAttrs(attrs: WriterAttr[]): { attrs: WriterAttr[]; attrSize: number } {
  const maxSize = Math.max(PERF_ATTR_SIZE_VER0, ...attrs.map((a) => a.attr.size || PERF_ATTR_SIZE_VER0));
  const needBig = attrs.some((a) => a.attr.config3 !== 0n);
  const attrSize = needBig ? Math.max(maxSize, 136) : Math.min(maxSize, PERF61_ATTR_SIZE);
  return { attrs: attrs.map((a) => ({ ...a, attr: { ...a.attr, size: attrSize } })), attrSize };
}

/**
 * perf's evlist__valid_sample_type: with several attrs every sample must
 * carry its id at the same place (ID or IDENTIFIER in every sample_type), or
 * perf refuses the file ("non matching sample_type"). perf stat files (STAT) are exempt.
 */
export function checkSampleTypes(attrs: WriterAttr[]): void {
  if (attrs.length < 2) return;
  const pos = attrs.map((a) => [calcIdPos(a.attr.sampleType), calcIsPos(a.attr.sampleType)]);
  const [id0, is0] = pos[0]!;
  if (id0! < 0 || is0! < 0 || pos.some(([i, s]) => i !== id0 || s !== is0)) {
    throw new Error(
      'PerfDataWriter: with several attrs every sample_type needs ID or IDENTIFIER at the same position ' +
        '(perf refuses the file otherwise: "non matching sample_type")',
    );
  }
}

/** Where the attrs and the data start for these attrs. */
export function fileLayout(attrs: WriterAttr[], attrSize: number): { attrsAt: number; dataAt: number } {
  const nIds = attrs.reduce((n, a) => n + a.ids.length, 0);
  const attrsAt = PERF_FILE_HEADER_SIZE + 8 * nIds;
  return { attrsAt, dataAt: attrsAt + attrs.length * (attrSize + FILE_SECTION_SIZE) };
}

/** Everything before the data: a zeroed header (written at the end), the ids, the attrs. */
export function encodeFileHead(le: boolean, attrs: WriterAttr[], attrSize: number): Uint8Array {
  const w = new ByteWriter(le, fileLayout(attrs, attrSize).dataAt);
  w.zeros(PERF_FILE_HEADER_SIZE);
  const idOffsets: number[] = [];
  for (const a of attrs) {
    idOffsets.push(w.pos);
    for (const id of a.ids) w.u64(id);
  }
  attrs.forEach((a, i) => {
    encodeEventAttr(w, a.attr, attrSize);
    w.u64(idOffsets[i]!).u64(8 * a.ids.length);
  });
  return w.finish();
}

/** The features, ascending by id: the table of sections, then the bodies. Starts at `tableAt`. */
export function encodeFeatureTail(le: boolean, features: Map<number, FeatureData>, tableAt: number) {
  const ids = [...features.keys()].sort((a, b) => a - b);
  const bodies = ids.map((id) => encodeFeature(features.get(id)!, le));
  const w = new ByteWriter(le, 4096);
  let at = tableAt + FILE_SECTION_SIZE * ids.length;
  for (const b of bodies) {
    w.u64(at).u64(b.length);
    at += b.length;
  }
  for (const b of bodies) w.bytes(b);
  return { ids, bytes: w.finish().slice() };
}

/** The final perf_file_header. */
export function encodeHead(
  le: boolean,
  attrs: WriterAttr[],
  attrSize: number,
  dataSize: number,
  features: number[],
): Uint8Array {
  const { attrsAt, dataAt } = fileLayout(attrs, attrSize);
  const h = new ByteWriter(le, PERF_FILE_HEADER_SIZE);
  encodeFileHeader(h, {
    attrSize: attrSize + FILE_SECTION_SIZE,
    attrs: { offset: attrsAt, size: attrs.length * (attrSize + FILE_SECTION_SIZE) },
    data: { offset: dataAt, size: dataSize },
    eventTypes: { offset: 0, size: 0 },
    features,
  });
  return h.finish();
}

/** Features perf does not synthesize in pipe mode (tracing data travels as its own record). */
const FILE_MODE_ONLY = new Set<number>([Feature.BUILD_ID, Feature.AUXTRACE, Feature.TRACING_DATA]);

/** Pipe mode's preamble: the pipe header, then attrs, features and tracing data as records. */
export function encodePipePreamble(le: boolean, attrs: WriterAttr[], features: Map<number, FeatureData>): Uint8Array {
  const w = new ByteWriter(le, 4096);
  encodePipeHeader(w);
  const head = { misc: 0, size: 0, fileOffset: 0 };
  for (const a of attrs)
    encodeRecord({ kind: 'header_attr', type: RecordType.HEADER_ATTR, ...head, attr: a.attr, ids: a.ids }, w);
  for (const [id, f] of [...features].sort((x, y) => x[0] - y[0])) {
    if (FILE_MODE_ONLY.has(id)) continue;
    const data = encodeFeature(f, le);
    if (data.length + 16 > 0xffff) continue; // does not fit a record
    encodeRecord({ kind: 'header_feature', type: RecordType.HEADER_FEATURE, ...head, featId: id, data }, w);
  }
  const td = features.get(Feature.TRACING_DATA);
  if (td && td.kind === 'raw' && td.bytes.length) {
    // the tracepoint formats follow a HEADER_TRACING_DATA record, 8-aligned
    const size = Math.ceil(td.bytes.length / 8) * 8;
    encodeRecord({ kind: 'tracing_data', type: RecordType.HEADER_TRACING_DATA, ...head, dataSize: size }, w);
    w.bytes(td.bytes).zeros(size - td.bytes.length);
  }
  return w.finish().slice();
}
