import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/**
 * PERF_RECORD_FINISHED_ROUND (68): no body. Everything before it with time < the previous
 * round's max may be flushed.
 */
export interface FinishedRoundRecord extends RecordHead {
  kind: 'finished_round';
}
export function decodeFinishedRound(_r: ByteReader, h: RecordHead): FinishedRoundRecord {
  return { kind: 'finished_round', ...h };
}
export function encodeFinishedRound(_rec: FinishedRoundRecord, _w: ByteWriter): void {}

/** PERF_RECORD_FINISHED_INIT (82): no body; marks the end of synthesized records. */
export interface FinishedInitRecord extends RecordHead {
  kind: 'finished_init';
}
export function decodeFinishedInit(_r: ByteReader, h: RecordHead): FinishedInitRecord {
  return { kind: 'finished_init', ...h };
}
export function encodeFinishedInit(_rec: FinishedInitRecord, _w: ByteWriter): void {}
