import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_STAT_CONFIG (75): u64 nr; {u64 tag, val}[nr]. */
export interface StatConfigRecord extends RecordHead {
  kind: 'stat_config';
  entries: { tag: bigint; val: bigint }[];
}
export function decodeStatConfig(r: ByteReader, h: RecordHead): StatConfigRecord {
  const at = r.pos;
  const nr = r.u64n('STAT_CONFIG (75).nr');
  if (nr * 16 > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: 'STAT_CONFIG (75).nr',
      actual: nr,
      expected: `≤ ${Math.floor(r.remaining / 16)} (record size)`,
    });
  }
  const entries = [];
  for (let i = 0; i < nr; i++) entries.push({ tag: r.u64(), val: r.u64() });
  return { kind: 'stat_config', ...h, entries };
}
export function encodeStatConfig(rec: StatConfigRecord, w: ByteWriter): void {
  w.u64(rec.entries.length);
  for (const e of rec.entries) w.u64(e.tag).u64(e.val);
}

/** PERF_RECORD_STAT (76): u64 id; u32 cpu, thread; u64 val, ena, run. */
export interface StatRecord extends RecordHead {
  kind: 'stat';
  id: bigint;
  cpu: number;
  thread: number;
  val: bigint;
  ena: bigint;
  run: bigint;
}
export function decodeStat(r: ByteReader, h: RecordHead): StatRecord {
  return { kind: 'stat', ...h, id: r.u64(), cpu: r.i32(), thread: r.i32(), val: r.u64(), ena: r.u64(), run: r.u64() };
}
export function encodeStat(rec: StatRecord, w: ByteWriter): void {
  w.u64(rec.id).i32(rec.cpu).i32(rec.thread).u64(rec.val).u64(rec.ena).u64(rec.run);
}

/** PERF_RECORD_STAT_ROUND (77): u64 type (0 interval, 1 final); u64 time. */
export interface StatRoundRecord extends RecordHead {
  kind: 'stat_round';
  roundType: bigint;
  time: bigint;
}
export function decodeStatRound(r: ByteReader, h: RecordHead): StatRoundRecord {
  return { kind: 'stat_round', ...h, roundType: r.u64(), time: r.u64() };
}
export function encodeStatRound(rec: StatRoundRecord, w: ByteWriter): void {
  w.u64(rec.roundType).u64(rec.time);
}
