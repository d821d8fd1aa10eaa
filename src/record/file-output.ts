/**
 * The recorder's output file: the shared PerfDataWriter in host byte order
 * (the kernel's records are copied from the rings as they are), created 0600
 * and fsync'd before the rename, as perf record does. The native reader
 * thread appends the ring data itself (PerfDataWriter.appendTarget); the
 * writer lays out the attrs, the features and the header around it.
 */
import { PerfDataWriter } from '../perfdata/writer.js';
import type { FeatureData } from '../perfdata/features/index.js';
import type { RecordEvent } from './events.js';

export const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export interface OutputEvent {
  event: RecordEvent;
  ids: bigint[];
}

/** Create `<path>.tmp-<pid>` with everything before the data written. */
export function createRecordOutput(path: string, events: OutputEvent[], features: FeatureData[]): PerfDataWriter {
  if (events.length === 0) throw new Error('record output: no events');
  const attrs = events.map((e) => ({ attr: e.event.attr, ids: e.ids, name: e.event.name }));
  return PerfDataWriter.createFile(path, attrs, { bigEndian: !HOST_LE, features, mode: 0o600, fsync: true });
}
