import { ByteReader } from '../io/byte-reader.js';
import type { ByteWriter } from '../io/byte-writer.js';
import { FormatError } from '../io/errors.js';
import { HEADER_FEAT_BITS } from '../abi/feature.js';

/**
 * struct perf_file_header (tools/perf/util/header.h), 104 bytes:
 *
 *   u64 magic "PERFILE2" | u64 size | u64 attr_size
 *   perf_file_section attrs, data, event_types   (u64 offset, u64 size each)
 *   u64 adds_features[4]                          (HEADER_FEAT_BITS = 256)
 *
 * The magic decides the byte order: "PERFILE2" read as a u64 of the file's own
 * order is 0x32454c4946524550; a big-endian file reads as bytes "2ELIFREP".
 * Pipe mode (`perf record -o -`) starts with only magic + size (16).
 */
export const PERF_MAGIC2 = 0x32454c4946524550n;
export const PERF_FILE_HEADER_SIZE = 104;
export const PERF_PIPE_HEADER_SIZE = 16;

export interface FileSection {
  offset: number;
  size: number;
}

export interface FileHeader {
  le: boolean;
  pipe: boolean;
  headerSize: number;
  /** Bytes per perf_file_attr entry: perf_event_attr + the ids section (16). */
  attrSize: number;
  attrs: FileSection;
  data: FileSection;
  eventTypes: FileSection;
  /** Feature ids whose bit is set in adds_features, ascending. */
  features: number[];
}

/**
 * Read the byte order from the first 8 bytes. Throws FormatError 'bad-magic'
 * for anything that is not PERFILE2 in either order (PERFILE1 is not supported).
 */
export function detectByteOrder(first8: Uint8Array): boolean {
  if (first8.length < 8) {
    throw new FormatError({
      kind: 'truncated',
      offset: 0,
      structure: 'perf_file_header',
      expected: '8-byte magic',
      actual: `${first8.length} bytes`,
    });
  }
  const dv = new DataView(first8.buffer, first8.byteOffset, 8);
  if (dv.getBigUint64(0, true) === PERF_MAGIC2) return true;
  if (dv.getBigUint64(0, false) === PERF_MAGIC2) return false;
  const text = Buffer.from(first8)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  throw new FormatError({
    kind: 'bad-magic',
    offset: 0,
    structure: 'perf_file_header',
    actual: JSON.stringify(text),
    expected: '"PERFILE2" (not a perf.data file)',
  });
}

function section(r: ByteReader, name: string): FileSection {
  return { offset: r.u64n(name), size: r.u64n(name) };
}

/**
 * The header at the start of a stream: pipe mode only. A file-mode header
 * (size 104) is refused before its sections are read, with what to do: its
 * sections are found by seeking, which a stream cannot.
 */
export function decodePipeHeader(first16: Uint8Array): FileHeader {
  const le = detectByteOrder(first16);
  const size = new DataView(first16.buffer, first16.byteOffset, 16).getBigUint64(8, le);
  if (size !== BigInt(PERF_PIPE_HEADER_SIZE)) {
    throw new FormatError({
      kind: 'unsupported',
      offset: 8,
      structure: 'perf_file_header.size',
      actual: Number(size),
      expected: '16 (pipe mode) on a stream; a file-mode perf.data is read by path (-i FILE)',
    });
  }
  return decodeFileHeader(first16);
}

/**
 * Decode the file or pipe header at offset 0. `fileSize` (when known) bounds
 * the sections: a section past the end is 'bad-size' naming the field.
 */
export function decodeFileHeader(bytes: Uint8Array, fileSize?: number): FileHeader {
  const le = detectByteOrder(bytes);
  const r = new ByteReader(bytes, le, 0, 'perf_file_header');
  r.u64();
  const headerSize = r.u64n();
  if (headerSize === PERF_PIPE_HEADER_SIZE) {
    return {
      le,
      pipe: true,
      headerSize,
      attrSize: 0,
      attrs: { offset: 0, size: 0 },
      data: { offset: 16, size: 0 },
      eventTypes: { offset: 0, size: 0 },
      features: [],
    };
  }
  if (headerSize < PERF_FILE_HEADER_SIZE) {
    throw new FormatError({
      kind: 'bad-size',
      offset: 8,
      structure: 'perf_file_header.size',
      actual: headerSize,
      expected: `${PERF_FILE_HEADER_SIZE} (file) or ${PERF_PIPE_HEADER_SIZE} (pipe)`,
    });
  }
  const attrSize = r.u64n();
  const attrs = section(r, 'perf_file_header.attrs');
  const data = section(r, 'perf_file_header.data');
  const eventTypes = section(r, 'perf_file_header.event_types');
  const features: number[] = [];
  for (let word = 0; word < HEADER_FEAT_BITS / 64; word++) {
    const v = r.u64();
    for (let bit = 0; bit < 64; bit++) if ((v >> BigInt(bit)) & 1n) features.push(word * 64 + bit);
  }
  const h: FileHeader = { le, pipe: false, headerSize, attrSize, attrs, data, eventTypes, features };
  if (fileSize !== undefined) {
    for (const [name, s, at] of [
      ['attrs', attrs, 24],
      ['data', data, 40],
    ] as const) {
      if (s.offset + s.size > fileSize) {
        throw new FormatError({
          kind: 'bad-size',
          offset: at,
          structure: `perf_file_header.${name}`,
          actual: `0x${s.offset.toString(16)}+0x${s.size.toString(16)}`,
          expected: `within the file (0x${fileSize.toString(16)} bytes)`,
        });
      }
    }
    if (attrs.size > 0 && (attrSize <= 16 || attrs.size % attrSize !== 0)) {
      throw new FormatError({
        kind: 'bad-size',
        offset: 16,
        structure: 'perf_file_header.attr_size',
        actual: attrSize,
        expected: `> 16 and dividing attrs.size ${attrs.size}`,
      });
    }
  }
  return h;
}

export function encodeFileHeader(w: ByteWriter, h: Omit<FileHeader, 'le' | 'pipe' | 'headerSize'>): void {
  w.u64(PERF_MAGIC2).u64(PERF_FILE_HEADER_SIZE).u64(h.attrSize);
  for (const s of [h.attrs, h.data, h.eventTypes]) w.u64(s.offset).u64(s.size);
  const words = [0n, 0n, 0n, 0n];
  for (const f of h.features) words[f >> 6]! |= 1n << BigInt(f & 63);
  for (const v of words) w.u64(v);
}

export function encodePipeHeader(w: ByteWriter): void {
  w.u64(PERF_MAGIC2).u64(PERF_PIPE_HEADER_SIZE);
}
