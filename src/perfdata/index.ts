/**
 * perf.data reading (and the record codecs the writer shares).
 * Entry point: `PerfFile.open(path)` / `PerfFile.fromStream(stdin)`, then
 * `for await (const r of f.records())` → `RawRecord` (zero-copy) → `r.decode()`.
 */
export * from './file-header.js';
export * from './layout.js';
export * from './sample-id.js';
export * from './raw-record.js';
export * from './window.js';
export * from './perf-file.js';
export * from './records/index.js';
export * from './open.js';
