import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_THREAD_MAP (73): u64 nr; {u64 pid; char comm[16]}[nr]. */
export interface ThreadMapRecord extends RecordHead {
  kind: 'thread_map';
  entries: { pid: bigint; comm: string }[];
}
export function decodeThreadMap(r: ByteReader, h: RecordHead): ThreadMapRecord {
  const at = r.pos;
  const nr = r.u64n('THREAD_MAP (73).nr');
  if (nr * 24 > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: 'THREAD_MAP (73).nr',
      actual: nr,
      expected: `≤ ${Math.floor(r.remaining / 24)} (record size)`,
    });
  }
  const entries = [];
  for (let i = 0; i < nr; i++) entries.push({ pid: r.u64(), comm: r.cstring(16) });
  return { kind: 'thread_map', ...h, entries };
}
export function encodeThreadMap(rec: ThreadMapRecord, w: ByteWriter): void {
  w.u64(rec.entries.length);
  for (const e of rec.entries) {
    const c = new Uint8Array(16);
    c.set(Buffer.from(e.comm, 'utf8').subarray(0, 15));
    w.u64(e.pid).bytes(c);
  }
}

export const PERF_CPU_MAP__CPUS = 0;
export const PERF_CPU_MAP__MASK = 1;
export const PERF_CPU_MAP__RANGE_CPUS = 2;

/**
 * struct perf_record_cpu_map_data (packed): u16 type, then
 *   CPUS:       u16 nr; u16 cpu[nr]
 *   MASK:       u16 nr; u16 long_size (4: u32 mask[nr] | 8: u8 pad[4]; u64 mask[nr])
 *   RANGE_CPUS: u8 any_cpu; u8 pad; u16 start_cpu; u16 end_cpu   (perf 6.1)
 * `cpus` is the decoded list (-1 for any_cpu in a range).
 */
export type CpuMapData =
  | { type: 0; cpus: number[] }
  | { type: 1; longSize: 4 | 8; mask: bigint[]; cpus: number[] }
  | { type: 2; anyCpu: boolean; startCpu: number; endCpu: number; cpus: number[] }
  | { type: number; raw: Uint8Array; cpus: number[] };

export function decodeCpuMapData(r: ByteReader, structure: string): CpuMapData {
  const type = r.u16();
  if (type === PERF_CPU_MAP__CPUS) {
    const nr = r.u16();
    r.need(2 * nr, structure);
    const cpus = [];
    for (let i = 0; i < nr; i++) cpus.push(r.u16() === 0xffff ? -1 : r.view.getInt16(r.pos - 2, r.le));
    return { type: 0, cpus };
  }
  if (type === PERF_CPU_MAP__MASK) {
    const nr = r.u16();
    const longSize = r.u16();
    if (longSize !== 4 && longSize !== 8) {
      throw new FormatError({
        kind: 'bad-value',
        offset: r.base + r.pos - 2,
        structure: `${structure}.long_size`,
        actual: longSize,
        expected: '4 or 8',
      });
    }
    if (longSize === 8) r.skip(4);
    r.need(nr * longSize, structure);
    const mask: bigint[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < nr; i++) {
      const m = longSize === 4 ? BigInt(r.u32()) : r.u64();
      mask.push(m);
      for (let b = 0; b < longSize * 8; b++) if ((m >> BigInt(b)) & 1n) cpus.push(i * longSize * 8 + b);
    }
    return { type: 1, longSize, mask, cpus };
  }
  if (type === PERF_CPU_MAP__RANGE_CPUS) {
    const anyCpu = r.u8() !== 0;
    r.u8();
    const startCpu = r.u16();
    const endCpu = r.u16();
    const cpus: number[] = anyCpu ? [-1] : [];
    for (let c = startCpu; c <= endCpu; c++) cpus.push(c);
    return { type: 2, anyCpu, startCpu, endCpu, cpus };
  }
  return { type, raw: r.copy(r.remaining), cpus: [] };
}

export function encodeCpuMapData(d: CpuMapData, w: ByteWriter): void {
  w.u16(d.type);
  if ('raw' in d) {
    w.bytes(d.raw);
  } else if (d.type === 0) {
    w.u16(d.cpus.length);
    for (const c of d.cpus) w.u16(c & 0xffff);
  } else if ('longSize' in d) {
    w.u16(d.mask.length).u16(d.longSize);
    if (d.longSize === 8) w.zeros(4);
    for (const m of d.mask) d.longSize === 4 ? w.u32(Number(m)) : w.u64(m);
  } else if ('anyCpu' in d) {
    w.u8(d.anyCpu ? 1 : 0)
      .u8(0)
      .u16(d.startCpu)
      .u16(d.endCpu);
  }
}

/** PERF_RECORD_CPU_MAP (74): perf_record_cpu_map_data, padded to 8. */
export interface CpuMapRecord extends RecordHead {
  kind: 'cpu_map';
  data: CpuMapData;
}
export function decodeCpuMap(r: ByteReader, h: RecordHead): CpuMapRecord {
  return { kind: 'cpu_map', ...h, data: decodeCpuMapData(r, 'CPU_MAP (74)') };
}
export function encodeCpuMap(rec: CpuMapRecord, w: ByteWriter): void {
  const start = w.pos;
  encodeCpuMapData(rec.data, w);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
