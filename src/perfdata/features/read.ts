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
import { wrappedCompressed2Size } from '../records/compressed.js';
import { decodeFeatureTable, featureTableOffset, featureTableSize } from './table.js';
import type { FeatureContext, FeatureData } from './types.js';

/** PERF_RECORD_HEADER_FEATURE: pipe mode sends each feature as a record: header, u64 feat_id, section bytes. */
export const PERF_RECORD_HEADER_FEATURE = 80;
const PERF_RECORD_HEADER_TRACING_DATA = 66;
const PERF_RECORD_COMPRESSED2 = 83;

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
  /** The sections read and decoded (with `partial`: those before the damage). */
  features: FeatureEntry[];
  /** `partial` only: ids in the table that were not read (at or after the damage), in table order. */
  unread?: number[];
  /** `partial` only: the first damage met, as the error a non-partial read throws. */
  damage?: FormatError;
}

export interface ReadFeaturesOptions {
  /**
   * Read what lies before a damage instead of throwing (perf's order: a bad
   * BUILD_ID section is skipped, any other bad section stops the reading).
   * A header or attrs outside the file still throw.
   */
  partial?: boolean;
}

type RawSection = { id: number; offset: number; bytes: Uint8Array };

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
export async function readFileFeatures(input: string, opts: ReadFeaturesOptions = {}): Promise<FileFeatures> {
  if (input === '-') return withStdinSpooled((p) => readFeaturesAt(p, '-', opts));
  return readFeaturesAt(perfDataPath(input), input, opts);
}

/** `name`: the file as errors name it (the user's '-' for a spooled stdin). */
async function readFeaturesAt(path: string, name: string, opts: ReadFeaturesOptions): Promise<FileFeatures> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw describeFsError(path, e) ?? e;
  }
  try {
    const fileSize = (await fh.stat()).size;
    const first = await readAt(fh, 0, Math.min(PERF_FILE_HEADER_SIZE, fileSize));
    const { header, damage } = decodeHeaderPartly(first, fileSize, !!opts.partial);
    const ff: FileFeatures = { header, fileSize, features: [] };
    const d = { damage, unread: [] as number[] };
    let raw: RawSection[];
    if (header.pipe) raw = await scanPipeFeatures(fh, header.le, fileSize, opts.partial ? d : undefined);
    else raw = damage ? [] : await readSections(fh, header, fileSize, opts.partial ? d : undefined);
    ff.features = opts.partial ? decodeUntilDamage(raw, header.le, d) : decodeFeatureEntries(raw, header.le);
    if (opts.partial) {
      ff.unread = d.unread;
      if (d.damage) ff.damage = d.damage.withFile(name);
    }
    return ff;
  } catch (e) {
    throw e instanceof FormatError ? e.withFile(name) : e;
  } finally {
    await fh.close();
  }
}

interface Damage {
  damage: FormatError | undefined;
  unread: number[];
}

/** The file header; with `partial`, a data section past the end is damage (perf prints the header frame). */
function decodeHeaderPartly(first: Uint8Array, fileSize: number, partial: boolean) {
  try {
    return { header: decodeFileHeader(first, fileSize), damage: undefined };
  } catch (e) {
    // offset 40: perf_file_header.data (the attrs, at 24, must be whole: perf prints nothing without them)
    if (!partial || !(e instanceof FormatError) || e.offset !== 40) throw e;
    return { header: decodeFileHeader(first), damage: e };
  }
}

/** File mode: the section table after the data, then each section (perf's order: table order). */
async function readSections(
  fh: FileHandle,
  header: FileHeader,
  fileSize: number,
  d: Damage | undefined,
): Promise<RawSection[]> {
  const at = featureTableOffset(header);
  const size = featureTableSize(header);
  if (at + size > fileSize) {
    const e = new FormatError({
      kind: 'truncated',
      offset: at,
      structure: 'feature section table',
      expected: `${size} bytes for ${header.features.length} features`,
      actual: `${Math.max(0, fileSize - at)} bytes left`,
    });
    if (!d) throw e;
    d.damage = e; // perf cannot read the table: it prints no section at all
    return [];
  }
  const tableBytes = await readAt(fh, at, size);
  if (!d) {
    const table = decodeFeatureTable(tableBytes, header, fileSize);
    const raw: RawSection[] = [];
    for (const s of table) raw.push({ id: s.id, offset: s.offset, bytes: await readAt(fh, s.offset, s.size) });
    return raw;
  }
  const raw: RawSection[] = [];
  for (const [i, id] of header.features.entries()) {
    // past the damage perf reads no section, except EVENT_DESC: its print reads the file itself
    if (d.unread.length && id !== Feature.EVENT_DESC) {
      d.unread.push(id);
      continue;
    }
    const after = d.unread.length > 0;
    try {
      const [s] = decodeFeatureTable(
        tableBytes.subarray(i * 16, i * 16 + 16),
        tableEntryHeader(header, i, id),
        fileSize,
      );
      if (s) raw.push({ id, offset: s.offset, bytes: await readAt(fh, s.offset, s.size) });
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      if (after) {
        d.unread.push(id);
        continue;
      }
      d.damage ??= e;
      // perf's process_build_id only warns; any other section that cannot be read ends perf's reading
      if (id !== Feature.BUILD_ID) d.unread.push(id);
    }
  }
  return raw;
}

/** A header whose table holds only entry `i` (so that decodeFeatureTable names that entry's offset). */
function tableEntryHeader(h: FileHeader, i: number, id: number): FileHeader {
  return { ...h, features: [id], data: { offset: h.data.offset + i * 16, size: h.data.size } };
}

/** Decode in table order; a section that does not decode stops there, like a short one (perf's process_*). */
function decodeUntilDamage(raw: RawSection[], le: boolean, d: Damage): FeatureEntry[] {
  const ok: RawSection[] = [];
  for (const [i, s] of raw.entries()) {
    try {
      decodeFeatureEntries([...ok, s], le);
      ok.push(s);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      d.damage ??= e;
      if (s.id === Feature.BUILD_ID) continue;
      d.unread.unshift(...raw.slice(i).map((r) => r.id));
      break;
    }
  }
  return decodeFeatureEntries(ok, le);
}

/**
 * Walk a pipe-mode stream record by record (8-byte headers), collecting
 * HEADER_FEATURE payloads. With `d`, a damaged record ends the walk (perf
 * has printed the features before it) instead of throwing.
 */
async function scanPipeFeatures(fh: FileHandle, le: boolean, fileSize: number, d?: Damage): Promise<RawSection[]> {
  const out: RawSection[] = [];
  try {
    await walkPipe(fh, le, fileSize, out);
  } catch (e) {
    if (!d || !(e instanceof FormatError)) throw e;
    d.damage = e;
  }
  return out;
}

async function walkPipe(fh: FileHandle, le: boolean, fileSize: number, out: RawSection[]): Promise<void> {
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
    let size = r.u16();
    if (size === 0 && type === PERF_RECORD_COMPRESSED2 && pos + 16 <= fileSize)
      size = wrappedCompressed2Size(await readAt(fh, pos, 16), le) ?? 0;
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
  if (pos < fileSize)
    throw new FormatError({
      kind: 'truncated',
      offset: pos,
      structure: 'perf_event_header',
      expected: '8 bytes',
      actual: `${fileSize - pos} left`,
    });
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
