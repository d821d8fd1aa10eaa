import { isFormatError } from '../io/errors.js';
import { decodeFeature } from './features/codec.js';
import type { FeatureContext, FeatureData } from './features/types.js';
import type { PerfFile } from './perf-file.js';

/**
 * One feature section of an open file, decoded: undefined when the file has
 * none. A malformed section throws a FormatError that names the file and the
 * section's own file offset, as every other reader error does — the callers
 * that treat a feature as optional catch it themselves.
 */
export async function readFileFeature(
  file: PerfFile,
  id: number,
  ctx: FeatureContext = {},
): Promise<FeatureData | undefined> {
  const bytes = await file.readFeature(id);
  if (!bytes) return undefined;
  const base = file.pipe ? 0 : (file.featureSection(id)?.offset ?? 0);
  try {
    return decodeFeature(id, bytes, file.le, base, ctx);
  } catch (e) {
    throw isFormatError(e) ? e.withFile(file.path) : e;
  }
}
