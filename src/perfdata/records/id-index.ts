import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import type { RecordHead } from './common.js';

export interface IdIndexEntry {
  id: bigint;
  idx: bigint;
  cpu: bigint;
  tid: bigint;
  /** struct id_index_entry_2 (perf 6.0+, when the record is long enough). */
  machinePid?: bigint;
  vcpu?: bigint;
}

/** PERF_RECORD_ID_INDEX (69): u64 nr; {u64 id, idx, cpu, tid}[nr]; optionally {u64 machine_pid, vcpu}[nr]. */
export interface IdIndexRecord extends RecordHead {
  kind: 'id_index';
  entries: IdIndexEntry[];
}
export function decodeIdIndex(r: ByteReader, h: RecordHead): IdIndexRecord {
  const at = r.pos;
  const nr = r.u64n('ID_INDEX (69).nr');
  if (nr * 32 > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: 'ID_INDEX (69).nr',
      actual: nr,
      expected: `≤ ${Math.floor(r.remaining / 32)} (record size)`,
    });
  }
  const entries: IdIndexEntry[] = [];
  for (let i = 0; i < nr; i++) entries.push({ id: r.u64(), idx: r.u64(), cpu: r.u64(), tid: r.u64() });
  if (nr > 0 && r.remaining >= nr * 16) {
    for (const e of entries) {
      e.machinePid = r.u64();
      e.vcpu = r.u64();
    }
  }
  return { kind: 'id_index', ...h, entries };
}
export function encodeIdIndex(rec: IdIndexRecord, w: ByteWriter): void {
  w.u64(rec.entries.length);
  for (const e of rec.entries) w.u64(e.id).u64(e.idx).u64(e.cpu).u64(e.tid);
  if (rec.entries.length && rec.entries.every((e) => e.machinePid !== undefined))
    for (const e of rec.entries) w.u64(e.machinePid!).u64(e.vcpu ?? 0n);
}
