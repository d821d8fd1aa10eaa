import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';

/**
 * Strings in feature sections (tools/perf/util/header.c do_write_string):
 *   u32 len; char str[len];   len = PERF_ALIGN(strlen + 1, NAME_ALIGN = 64)
 * The string ends at its first NUL; the rest is zero padding.
 */
export const NAME_ALIGN = 64;

export function readPerfString(r: ByteReader, what = r.structure): string {
  const at = r.pos;
  const len = r.u32();
  if (len > r.remaining) {
    r.pos = at;
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: `${what} string length`,
      actual: len,
      expected: `≤ ${r.remaining} bytes left in the section`,
    });
  }
  return r.cstring(len);
}

export function writePerfString(w: ByteWriter, s: string): void {
  const b = Buffer.from(s, 'utf8');
  const len = Math.ceil((b.length + 1) / NAME_ALIGN) * NAME_ALIGN;
  w.u32(len)
    .bytes(b)
    .zeros(len - b.length);
}

/**
 * Read a u32 element count and check that `count * minSize` bytes can still
 * follow, so a corrupt count cannot make us allocate a huge array.
 */
export function readCount(r: ByteReader, minSize: number, what: string, count = r.u32()): number {
  if (count * minSize > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + r.pos - 4,
      structure: what,
      actual: count,
      expected: `a count that fits the ${r.remaining} bytes left`,
    });
  }
  return count;
}

/** A u64 count, same check. */
export function readCount64(r: ByteReader, minSize: number, what: string): number {
  const at = r.pos;
  const n = r.u64();
  if (n * BigInt(minSize) > BigInt(r.remaining)) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: what,
      actual: n,
      expected: `a count that fits the ${r.remaining} bytes left`,
    });
  }
  return Number(n);
}

/**
 * Read a section's version word (u32, or u64 with `wide`): perf's process_*
 * refuses every version but 1, and so do we, at the word's offset.
 */
export function readVersion1(r: ByteReader, structure: string, wide = false): void {
  const at = r.pos;
  const version = wide ? r.u64() : r.u32();
  if (version === 1 || version === 1n) return;
  throw new FormatError({ kind: 'unsupported', offset: r.base + at, structure, actual: version, expected: '1' });
}
