/**
 * Public API of the feature sections, the writer and the JSON-lines form
 * (one entry so src/index.ts needs one line). Names that would clash with the
 * reader's exports are left out (use the module paths for those).
 */
export {
  decodeFeature,
  encodeFeature,
  featureIdOf,
  featureKindOf,
  canChangeByteOrder,
  decodeFeatureTable,
  encodeFeatureTable,
  featureTableOffset,
  readFileFeatures,
  decodeFeatureEntries,
  readPerfString,
  writePerfString,
  type FeatureData,
  type FeatureKind,
  type FeatureContext,
  type FeatureSection,
  type FeatureEntry,
  type FileFeatures,
  type EventDesc,
  type CpuTopology,
  type AuxtraceIndexEntry,
} from './features/index.js';
export { PerfDataWriter, type WriterAttr, type PerfDataWriterOptions } from './writer.js';
export { copyPerfData, readInputInfo, type CopyOptions, type CopyResult, type InputInfo } from './writer-copy.js';
export { perfDataToJsonl, jsonlToPerfData, recordToJson, recordFromJson, JSONL_FORMAT } from './jsonl.js';
