import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { ReadFormat } from '../../abi/sample-format.js';
import { readFormatEntrySize } from '../layout.js';

/**
 * struct read_format (uapi perf_event.h), shaped by attr.read_format:
 *   !GROUP: u64 value; [u64 time_enabled]; [u64 time_running]; [u64 id]; [u64 lost]
 *    GROUP: u64 nr; [time_enabled]; [time_running]; { u64 value; [u64 id]; [u64 lost] }[nr]
 */
export interface ReadValues {
  timeEnabled?: bigint;
  timeRunning?: bigint;
  /** One entry without GROUP; nr entries with GROUP. */
  values: { value: bigint; id?: bigint; lost?: bigint }[];
  group: boolean;
}

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

export function decodeReadFormat(r: ByteReader, rf: bigint): ReadValues {
  const group = has(rf, ReadFormat.GROUP);
  const out: ReadValues = { values: [], group };
  if (group) {
    const at = r.pos;
    const nr = r.u64n('read_format.nr');
    const head = (has(rf, ReadFormat.TOTAL_TIME_ENABLED) ? 8 : 0) + (has(rf, ReadFormat.TOTAL_TIME_RUNNING) ? 8 : 0);
    if (nr * readFormatEntrySize(rf) + head > r.remaining) {
      throw new FormatError({
        kind: 'bad-size',
        offset: r.base + at,
        structure: 'read_format.nr',
        actual: nr,
        expected: 'entries that fit in the record',
      });
    }
    if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) out.timeEnabled = r.u64();
    if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) out.timeRunning = r.u64();
    for (let i = 0; i < nr; i++) out.values.push(entry(r, rf));
  } else {
    const value = r.u64();
    if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) out.timeEnabled = r.u64();
    if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) out.timeRunning = r.u64();
    const e: ReadValues['values'][number] = { value };
    if (has(rf, ReadFormat.ID)) e.id = r.u64();
    if (has(rf, ReadFormat.LOST)) e.lost = r.u64();
    out.values.push(e);
  }
  return out;
}

function entry(r: ByteReader, rf: bigint): ReadValues['values'][number] {
  const e: ReadValues['values'][number] = { value: r.u64() };
  if (has(rf, ReadFormat.ID)) e.id = r.u64();
  if (has(rf, ReadFormat.LOST)) e.lost = r.u64();
  return e;
}

export function encodeReadFormat(v: ReadValues, w: ByteWriter, rf: bigint): void {
  const times = (): void => {
    if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) w.u64(v.timeEnabled ?? 0n);
    if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) w.u64(v.timeRunning ?? 0n);
  };
  const tail = (e: ReadValues['values'][number]): void => {
    if (has(rf, ReadFormat.ID)) w.u64(e.id ?? 0n);
    if (has(rf, ReadFormat.LOST)) w.u64(e.lost ?? 0n);
  };
  if (has(rf, ReadFormat.GROUP)) {
    w.u64(v.values.length);
    times();
    for (const e of v.values) {
      w.u64(e.value);
      tail(e);
    }
  } else {
    const e = v.values[0] ?? { value: 0n };
    w.u64(e.value);
    times();
    tail(e);
  }
}
