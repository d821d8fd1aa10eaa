import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/** header.misc bit: the build id's size byte is valid (perf/event.h). */
export const PERF_RECORD_MISC_BUILD_ID_SIZE = 1 << 15;

/**
 * PERF_RECORD_HEADER_BUILD_ID (67): i32 pid; u8 build_id[20]; u8 size; u8[3] reserved; char filename[] (padded).
 * Also the entry format of the BUILD_ID feature section.
 */
export interface BuildIdRecord extends RecordHead {
  kind: 'build_id';
  pid: number;
  /** Build id bytes: `size` of them when misc has BUILD_ID_SIZE, else all 20. */
  buildId: Uint8Array;
  /** The whole 24-byte field, for exact round trips. */
  buildIdRaw: Uint8Array;
  filename: string;
  /** Bytes the filename field occupies (perf pads it to 64, NAME_ALIGN); kept for exact round trips. */
  filenameSize?: number;
}
export function decodeBuildId(r: ByteReader, h: RecordHead): BuildIdRecord {
  const pid = r.i32();
  const raw = r.copy(24);
  const n = h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? Math.min(raw[20]!, 20) : 20;
  const filenameSize = r.remaining;
  return {
    kind: 'build_id',
    ...h,
    pid,
    buildId: raw.subarray(0, n),
    buildIdRaw: raw,
    filename: r.cstring(),
    filenameSize,
  };
}
export function encodeBuildId(rec: BuildIdRecord, w: ByteWriter): void {
  const start = w.pos;
  const raw = new Uint8Array(24);
  raw.set(rec.buildIdRaw.subarray(0, 24));
  raw.set(rec.buildId.subarray(0, 20));
  if (rec.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) raw[20] = rec.buildId.length;
  w.i32(rec.pid).bytes(raw);
  const name = Buffer.from(rec.filename, 'utf8');
  // perf pads the filename to 64 (NAME_ALIGN); without a recorded size pad to 64 as perf does
  const field = Math.max(rec.filenameSize ?? Math.ceil((name.length + 1) / 64) * 64, name.length + 1);
  w.bytes(name).zeros(field - name.length);
  void start;
}
