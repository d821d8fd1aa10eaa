import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';
import { decodeCpuMapData, encodeCpuMapData, type CpuMapData } from './maps.js';

export const PERF_EVENT_UPDATE__UNIT = 0;
export const PERF_EVENT_UPDATE__SCALE = 1;
export const PERF_EVENT_UPDATE__NAME = 2;
export const PERF_EVENT_UPDATE__CPUS = 3;

/** PERF_RECORD_EVENT_UPDATE (78): u64 type; u64 id; then UNIT/NAME: string, SCALE: double, CPUS: cpu_map_data. */
export interface EventUpdateRecord extends RecordHead {
  kind: 'event_update';
  updateType: bigint;
  id: bigint;
  unit?: string;
  name?: string;
  scale?: number;
  cpus?: CpuMapData;
  /** Body bytes of an update type we do not know, and the size of a string field (for exact round trips). */
  raw?: Uint8Array;
  dataSize?: number;
}
export function decodeEventUpdate(r: ByteReader, h: RecordHead): EventUpdateRecord {
  const rec: EventUpdateRecord = { kind: 'event_update', ...h, updateType: r.u64(), id: r.u64() };
  const t = rec.updateType;
  rec.dataSize = r.remaining;
  if (t === 0n) rec.unit = r.cstring();
  else if (t === 2n) rec.name = r.cstring();
  else if (t === 1n) {
    r.need(8, 'EVENT_UPDATE (78).scale');
    rec.scale = r.view.getFloat64(r.pos, r.le);
    r.skip(8);
  } else if (t === 3n) rec.cpus = decodeCpuMapData(r, 'EVENT_UPDATE (78).cpus');
  else rec.raw = r.copy(r.remaining);
  return rec;
}
export function encodeEventUpdate(rec: EventUpdateRecord, w: ByteWriter): void {
  w.u64(rec.updateType).u64(rec.id);
  const start = w.pos;
  if (rec.unit !== undefined || rec.name !== undefined) {
    const b = Buffer.from(rec.unit ?? rec.name ?? '', 'utf8');
    w.bytes(b);
    w.zeros(Math.max(rec.dataSize ?? 0, Math.ceil((b.length + 1) / 8) * 8) - b.length);
    return;
  }
  if (rec.scale !== undefined) {
    const f = new Uint8Array(8);
    new DataView(f.buffer).setFloat64(0, rec.scale, w.le);
    w.bytes(f);
  } else if (rec.cpus) encodeCpuMapData(rec.cpus, w);
  else if (rec.raw) w.bytes(rec.raw);
  const have = w.pos - start;
  w.zeros(Math.max((rec.dataSize ?? 0) - have, (8 - (have % 8)) % 8));
}
