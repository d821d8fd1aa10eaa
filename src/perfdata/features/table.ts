import { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { featureName } from '../../abi/feature.js';
import type { FileHeader, FileSection } from '../file-header.js';

/**
 * The feature section table: one perf_file_section {u64 offset, u64 size}
 * per set bit of adds_features, ascending, at data.offset + data.size
 * (header.c perf_header__process_sections).
 */
export interface FeatureSection extends FileSection {
  id: number;
}

export function featureTableOffset(h: FileHeader): number {
  return h.data.offset + h.data.size;
}

export function featureTableSize(h: FileHeader): number {
  return 16 * h.features.length;
}

/**
 * Decode the table from `bytes` (which start at the table's offset). Every
 * section must lie inside the file: a bad one is a FormatError naming the
 * table entry's offset.
 */
export function decodeFeatureTable(bytes: Uint8Array, h: FileHeader, fileSize: number): FeatureSection[] {
  const at = featureTableOffset(h);
  const r = new ByteReader(bytes, h.le, at, 'feature section table');
  const out: FeatureSection[] = [];
  for (const id of h.features) {
    const entryAt = at + r.pos;
    const offset = r.u64n(`feature section table (${featureName(id)})`);
    const size = r.u64n(`feature section table (${featureName(id)})`);
    if (offset + size > fileSize || (size > 0 && offset < 104)) {
      throw new FormatError({
        kind: 'bad-size',
        offset: entryAt,
        structure: `feature section table entry ${featureName(id)}`,
        actual: `0x${offset.toString(16)}+0x${size.toString(16)}`,
        expected: `inside the file (0x${fileSize.toString(16)} bytes)`,
      });
    }
    out.push({ id, offset, size });
  }
  return out;
}

export function encodeFeatureTable(w: ByteWriter, sections: FileSection[]): void {
  for (const s of sections) w.u64(s.offset).u64(s.size);
}
