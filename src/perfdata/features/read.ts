import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ByteReader } from '../../io/byte-reader.js';
import { FormatError } from '../../io/errors.js';
import { Feature } from '../../abi/feature.js';
import { decodeFileHeader, PERF_FILE_HEADER_SIZE, type FileHeader } from '../file-header.js';
import { describeFsError, perfDataPath } from '../input-path.js';
import { decodeFeature } from './codec.js';
import { decodeFeatureTable, featureTableOffset, featureTableSize } from './table.js';
import type { FeatureContext, FeatureData } from './types.js';

/** PERF_RECORD_HEADER_FEATURE: pipe mode sends each feature as a record: header, u64 feat_id, section bytes. */
export const PERF_RECORD_HEADER_FEATURE = 80;
const PERF_RECORD_HEADER_TRACING_DATA = 66;

export interface FeatureEntry {
  id: number;
  /** File offset of the section bytes (pipe mode: of the record's payload). */
  offset: number;
  size: number;
  bytes: Uint8Array;
  data: FeatureData;
}

export interface FileFeatures {
  header: FileHeader;
  fileSize: number;
  features: FeatureEntry[];
}

async function readAt(fh: FileHandle, offset: number, size: number): Promise<Uint8Array> {
  const buf = new Uint8Array(size);
  let got = 0;
  while (got < size) {
    const { bytesRead } = await fh.read(buf, got, size - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  if (got < size)
    throw new FormatError({
      kind: 'truncated',
      offset: offset + got,
      structure: 'perf.data',
      expected: `${size} bytes`,
      actual: `${got}`,
    });
  return buf;
}

/** Decode in two passes: NRCPUS first, since CPU_TOPOLOGY needs nr_cpus_avail. */
export function decodeFeatureEntries(
  raw: { id: number; offset: number; bytes: Uint8Array }[],
  le: boolean,
): FeatureEntry[] {
  const ctx: FeatureContext = {};
  for (const s of raw) {
    if (s.id === Feature.NRCPUS) {
      const d = decodeFeature(s.id, s.bytes, le, s.offset);
      if (d.kind === 'nrcpus') ctx.nrCpusAvail = d.avail;
    }
  }
  return raw.map((s) => ({
    id: s.id,
    offset: s.offset,
    size: s.bytes.length,
    bytes: s.bytes,
    data: decodeFeature(s.id, s.bytes, le, s.offset, ctx),
  }));
}

/**
 * Read the file header and every feature section of a perf.data file, in
 * file mode (the section table after the data) or pipe mode (HEADER_FEATURE
 * records anywhere in the stream). Throws FormatError naming the file.
 */
export async function readFileFeatures(input: string): Promise<FileFeatures> {
  if (input === '-') return withStdinSpooled((p) => readFeaturesAt(p, '-'));
  return readFeaturesAt(perfDataPath(input), input);
}

/** `name`: the file as errors name it (the user's '-' for a spooled stdin). */
async function readFeaturesAt(path: string, name: string): Promise<FileFeatures> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw describeFsError(path, e) ?? e;
  }
  try {
    const fileSize = (await fh.stat()).size;
    const first = await readAt(fh, 0, Math.min(PERF_FILE_HEADER_SIZE, fileSize));
    const header = decodeFileHeader(first, fileSize);
    let raw: { id: number; offset: number; bytes: Uint8Array }[];
    if (header.pipe) raw = await scanPipeFeatures(fh, header.le, fileSize);
    else {
      const at = featureTableOffset(header);
      const size = featureTableSize(header);
      if (at + size > fileSize) {
        throw new FormatError({
          kind: 'truncated',
          offset: at,
          structure: 'feature section table',
          expected: `${size} bytes for ${header.features.length} features`,
          actual: `${Math.max(0, fileSize - at)} bytes left`,
        });
      }
      const table = decodeFeatureTable(await readAt(fh, at, size), header, fileSize);
      raw = [];
      for (const s of table) raw.push({ id: s.id, offset: s.offset, bytes: await readAt(fh, s.offset, s.size) });
    }
    return { header, fileSize, features: decodeFeatureEntries(raw, header.le) };
  } catch (e) {
    throw e instanceof FormatError ? e.withFile(name) : e;
  } finally {
    await fh.close();
  }
}

/** Walk a pipe-mode stream record by record (8-byte headers), collecting HEADER_FEATURE payloads. */
async function scanPipeFeatures(
  fh: FileHandle,
  le: boolean,
  fileSize: number,
): Promise<{ id: number; offset: number; bytes: Uint8Array }[]> {
  const out: { id: number; offset: number; bytes: Uint8Array }[] = [];
  const WINDOW = 1 << 20;
  let pos = 16;
  let buf: Uint8Array = new Uint8Array(0);
  let bufAt = pos;
  while (pos + 8 <= fileSize) {
    if (pos + 8 > bufAt + buf.length) {
      bufAt = pos;
      buf = await readAt(fh, pos, Math.min(WINDOW, fileSize - pos));
    }
    const r = new ByteReader(buf, le, bufAt, 'perf_event_header');
    r.seek(pos - bufAt);
    const type = r.u32();
    r.u16();
    const size = r.u16();
    if (size < 8)
      throw new FormatError({
        kind: 'bad-size',
        offset: pos,
        structure: `record type ${type}`,
        actual: size,
        expected: '≥ 8',
      });
    if (pos + size > fileSize)
      throw new FormatError({
        kind: 'truncated',
        offset: pos,
        structure: `record type ${type}`,
        expected: `${size} bytes`,
        actual: `${fileSize - pos} left`,
      });
    if (type === PERF_RECORD_HEADER_FEATURE) {
      if (size < 16)
        throw new FormatError({
          kind: 'bad-size',
          offset: pos,
          structure: 'HEADER_FEATURE (80)',
          actual: size,
          expected: '≥ 16',
        });
      const body = await readAt(fh, pos + 8, size - 8);
      const br = new ByteReader(body, le, pos + 8, 'HEADER_FEATURE (80)');
      const id = br.u64();
      if (id === 0n || id >= 256n)
        throw new FormatError({
          kind: 'bad-value',
          offset: pos + 8,
          structure: 'HEADER_FEATURE feat_id',
          actual: id,
          expected: '1..255',
        });
      out.push({ id: Number(id), offset: pos + 16, bytes: body.slice(8) });
    }
    if (type === PERF_RECORD_HEADER_TRACING_DATA && size >= 12) {
      // the tracing data itself follows the record, outside its size (u32 size, 8-aligned)
      const sr = new ByteReader(await readAt(fh, pos + 8, 4), le, pos + 8, 'HEADER_TRACING_DATA (66)');
      pos += Math.ceil(sr.u32() / 8) * 8;
    }
    pos += size;
  }
  return out;
}

/**
 * Pipe mode on stdin: the stream is copied to a private temporary file first
 * (feature records may come anywhere in it), which is removed afterwards.
 */
async function withStdinSpooled<T>(fn: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'perfpoke-stdin-'));
  const path = join(dir, 'pipe.data');
  try {
    await pipeline(process.stdin, createWriteStream(path, { mode: 0o600 }));
    return await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
