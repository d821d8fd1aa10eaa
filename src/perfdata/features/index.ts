export * from './types.js';
export { decodeFeature, encodeFeature, featureIdOf, featureKindOf, canChangeByteOrder } from './codec.js';
export {
  decodeFeatureTable,
  encodeFeatureTable,
  featureTableOffset,
  featureTableSize,
  type FeatureSection,
} from './table.js';
export {
  readFileFeatures,
  decodeFeatureEntries,
  PERF_RECORD_HEADER_FEATURE,
  type FeatureEntry,
  type FileFeatures,
} from './read.js';
export { readPerfString, writePerfString, NAME_ALIGN } from './perf-string.js';
export {
  buildIdHex,
  encodeBuildIdEntry,
  PERF_RECORD_HEADER_BUILD_ID,
  PERF_RECORD_MISC_BUILD_ID_SIZE,
} from './build-id.js';
