import { PerfFile, type ReaderOptions } from './perf-file.js';

/**
 * The library's front door: open a perf.data file (file or pipe mode, either
 * byte order; '-' reads stdin). Same as `PerfFile.open`.
 * Throws FormatError (with the file and offset) for a malformed file, a Node
 * fs error for a missing one.
 */
export function openPerfData(path: string, opts: ReaderOptions = {}): Promise<PerfFile> {
  return PerfFile.open(path, opts);
}
