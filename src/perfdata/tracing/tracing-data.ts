/**
 * The tracing data perf stores for tracepoint events: the HEADER_TRACING_DATA
 * feature section (file mode) or the payload of a HEADER_TRACING_DATA record
 * (pipe mode). Layout (perf's trace-event-info.c writes it, trace-event-read.c
 * reads it): "\x17\x08\x44tracing", a version string, the file's byte order
 * and long size, the page size, the header_page / header_event files, the
 * ftrace format files, the event format files per system, kallsyms, printk
 * formats and (version ≥ 0.6) the saved cmdlines. Numbers are in the byte
 * order the blob names, which may differ from the perf.data file's.
 */
import { ByteReader } from '../../io/byte-reader.js';
import { FormatError } from '../../io/errors.js';
import { Feature } from '../../abi/feature.js';
import type { PerfFile } from '../perf-file.js';
import { type EventFormat, parseEventFormat } from './event-format.js';

export interface TracingData {
  version: string;
  bigEndian: boolean;
  longSize: number;
  pageSize: number;
  /** Every event format the blob carries, by its id (the tracepoint attr's config). */
  events: Map<number, EventFormat>;
}

const MAGIC = [0x17, 0x08, 0x44, ...new TextEncoder().encode('tracing')];

function bad(r: ByteReader, expected: string, actual: string): FormatError {
  return new FormatError({
    kind: 'bad-value',
    offset: r.base + r.pos,
    structure: 'tracing data',
    expected,
    actual,
  });
}

/** A NUL-terminated string at the cursor; the cursor moves past its NUL. */
function zstring(r: ByteReader): string {
  const end = r.bytes.indexOf(0, r.pos);
  if (end < 0) throw bad(r, 'a NUL-terminated string', 'no NUL before the end');
  const s = new TextDecoder().decode(r.bytes.subarray(r.pos, end));
  r.seek(end + 1);
  return s;
}

/** Reads a u64 size the way perf does, as a number (a size past 2^53 cannot fit the blob anyway). */
function size8(r: ByteReader): number {
  return r.u64n('tracing data size');
}

/** Parse the tracing data blob; `base` is its file offset (errors name real offsets). */
export function parseTracingData(bytes: Uint8Array, base = 0): TracingData {
  const head = new ByteReader(bytes, true, base, 'tracing data');
  head.need(MAGIC.length);
  for (let i = 0; i < MAGIC.length; i++) {
    if (head.bytes[i] !== MAGIC[i]) throw bad(head, '"\\x17\\x08\\x44tracing"', 'other bytes');
  }
  head.skip(MAGIC.length);
  const version = zstring(head);
  head.need(2);
  const bigEndian = head.u8() !== 0;
  const longSize = head.u8();
  // from here on numbers are in the blob's own byte order
  const r = new ByteReader(bytes, !bigEndian, base, 'tracing data');
  r.seek(head.pos);
  const pageSize = r.u32();
  const headerPage = r.cstring(12);
  if (headerPage !== 'header_page') throw bad(r, '"header_page"', JSON.stringify(headerPage));
  r.skip(size8(r));
  const headerEvent = r.cstring(13);
  if (headerEvent !== 'header_event') throw bad(r, '"header_event"', JSON.stringify(headerEvent));
  r.skip(size8(r));
  const events = new Map<number, EventFormat>();
  const add = (system: string): void => {
    const n = size8(r);
    r.need(n, 'tracing data event format');
    const text = new TextDecoder().decode(r.bytes.subarray(r.pos, r.pos + n));
    r.skip(n);
    const ev = parseEventFormat(text, system);
    if (ev) events.set(ev.id, ev);
  };
  const ftrace = r.u32();
  for (let i = 0; i < ftrace; i++) add('ftrace');
  const systems = r.u32();
  for (let i = 0; i < systems; i++) {
    const system = zstring(r);
    const count = r.u32();
    for (let j = 0; j < count; j++) add(system);
  }
  // kallsyms and printk formats (u32 sizes) and saved cmdlines follow: perf's
  // script prints through the recording's kernel map, not these
  return { version, bigEndian, longSize, pageSize, events };
}

/** The file's tracing data (file mode: the HEADER_TRACING_DATA feature), if it has any. */
export async function readTracingData(file: PerfFile): Promise<TracingData | undefined> {
  if (file.pipe) return undefined; // pipe mode: the HEADER_TRACING_DATA record carries it
  const bytes = await file.readFeature(Feature.TRACING_DATA);
  if (!bytes || bytes.length === 0) return undefined;
  try {
    return parseTracingData(bytes, file.featureSection(Feature.TRACING_DATA)?.offset ?? 0);
  } catch (e) {
    throw e instanceof FormatError ? e.withFile(file.path) : e;
  }
}
