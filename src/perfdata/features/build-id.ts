import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { hexString } from '../../io/hex.js';
import { readCount64, NAME_ALIGN } from './perf-string.js';
import type { BuildIdEntry, FeatureData } from './types.js';

/**
 * BUILD_ID: a run of perf_record_header_build_id records (type 67) filling
 * the section (header.c perf_header__read_build_ids):
 *   perf_event_header; s32 pid; u8 build_id[24]; char filename[size - 36]
 * filename is NUL-padded to NAME_ALIGN.
 */
export const PERF_RECORD_HEADER_BUILD_ID = 67;
export const PERF_RECORD_MISC_BUILD_ID_SIZE = 1 << 15;
const BEV_SIZE = 36;

export function decodeBuildIds(r: ByteReader): FeatureData {
  const entries: BuildIdEntry[] = [];
  while (r.remaining > 0) {
    const at = r.pos;
    const type = r.u32(); // perf writes 0 and never looks at it
    const misc = r.u16();
    const size = r.u16();
    if (size < BEV_SIZE || at + size > r.length) {
      throw new FormatError({
        kind: 'bad-size',
        offset: r.base + at,
        structure: 'BUILD_ID entry',
        actual: size,
        expected: `${BEV_SIZE}..${r.length - at}`,
      });
    }
    const pid = r.i32();
    const buildId = r.copy(24);
    entries.push({ type, misc, pid, buildId, filename: r.cstring(size - BEV_SIZE) });
  }
  return { kind: 'build_id', entries };
}

/** u64 nr; {u64 file_offset, u64 sz}[nr] (auxtrace.c auxtrace_index__write). */
export function decodeAuxtrace(r: ByteReader): FeatureData {
  const n = readCount64(r, 16, 'AUXTRACE index nr');
  const entries = [];
  for (let i = 0; i < n; i++) {
    const fileOffset = r.u64n('AUXTRACE index file_offset');
    entries.push({ fileOffset, size: r.u64n('AUXTRACE index sz') });
  }
  return { kind: 'auxtrace', entries };
}

export function encodeBuildIdEntry(w: ByteWriter, e: BuildIdEntry): void {
  const name = Buffer.from(e.filename, 'utf8');
  const len = Math.ceil((name.length + 1) / NAME_ALIGN) * NAME_ALIGN;
  w.u32(e.type)
    .u16(e.misc)
    .u16(BEV_SIZE + len)
    .i32(e.pid);
  const id = new Uint8Array(24);
  id.set(e.buildId.subarray(0, 24));
  w.bytes(id)
    .bytes(name)
    .zeros(len - name.length);
}

export function encodeIndexes(f: FeatureData, w: ByteWriter): boolean {
  switch (f.kind) {
    case 'build_id':
      for (const e of f.entries) encodeBuildIdEntry(w, e);
      return true;
    case 'auxtrace':
      w.u64(f.entries.length);
      for (const e of f.entries) w.u64(e.fileOffset).u64(e.size);
      return true;
    default:
      return false;
  }
}

/** The build id as perf prints it: hex of the used bytes (20, or the stored size). */
export function buildIdHex(e: BuildIdEntry): string {
  const n = e.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? Math.min(e.buildId[20]!, 20) : 20;
  return hexString(e.buildId.subarray(0, n));
}
