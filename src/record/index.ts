/** Live recording. The native addon loads lazily, on the first record() call, so importing this is always safe. */
export { record, RecordError, type RecordOptions, type RecordResult } from './session.js';
export { TargetError } from './target.js';
export { AddonMissingError, loadRecorderAddon, type NativeStats } from './native.js';
export { UNSUPPORTED_RECORD_OPTIONS, unsupportedRecordOption } from './unsupported-options.js';
export { copyKcoreDir, KcoreUnavailableError } from './kcore-dir.js';
