import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { PERF_RECORD_MISC_MMAP_BUILD_ID } from '../../abi/record-type.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_MMAP (1): u32 pid, tid; u64 addr, len, pgoff; char filename[] (NUL, padded to 8). */
export interface MmapRecord extends KernelRecordHead {
  kind: 'mmap';
  pid: number;
  tid: number;
  addr: bigint;
  len: bigint;
  pgoff: bigint;
  filename: string;
}

export function decodeMmap(r: ByteReader, h: RecordHead): MmapRecord {
  return {
    kind: 'mmap',
    ...h,
    pid: r.i32(),
    tid: r.i32(),
    addr: r.u64(),
    len: r.u64(),
    pgoff: r.u64(),
    filename: r.cstring(),
  };
}

export function encodeMmap(rec: MmapRecord, w: ByteWriter): void {
  const start = w.pos;
  w.i32(rec.pid).i32(rec.tid).u64(rec.addr).u64(rec.len).u64(rec.pgoff).cstring(rec.filename);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}

/**
 * PERF_RECORD_MMAP2 (10): as MMAP plus either {u32 maj, min; u64 ino, ino_generation}
 * or, when misc has PERF_RECORD_MISC_MMAP_BUILD_ID (Linux 5.12+),
 * {u8 build_id_size, u8 res, u16 res, u8 build_id[20]}; then u32 prot, flags; filename.
 */
export interface Mmap2Record extends KernelRecordHead {
  kind: 'mmap2';
  pid: number;
  tid: number;
  addr: bigint;
  len: bigint;
  pgoff: bigint;
  maj?: number;
  min?: number;
  ino?: bigint;
  inoGeneration?: bigint;
  /** Only with MISC_MMAP_BUILD_ID: the first buildIdSize bytes of the 20-byte field. */
  buildId?: Uint8Array;
  /** The full 20-byte field (kept so padding bytes round-trip). */
  buildIdRaw?: Uint8Array;
  prot: number;
  flags: number;
  filename: string;
}

export function decodeMmap2(r: ByteReader, h: RecordHead): Mmap2Record {
  const rec: Mmap2Record = {
    kind: 'mmap2',
    ...h,
    pid: r.i32(),
    tid: r.i32(),
    addr: r.u64(),
    len: r.u64(),
    pgoff: r.u64(),
    prot: 0,
    flags: 0,
    filename: '',
  };
  if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    const n = r.u8();
    r.u8();
    r.u16();
    const raw = r.copy(20);
    rec.buildIdRaw = raw;
    rec.buildId = raw.subarray(0, Math.min(n, 20));
  } else {
    rec.maj = r.u32();
    rec.min = r.u32();
    rec.ino = r.u64();
    rec.inoGeneration = r.u64();
  }
  rec.prot = r.u32();
  rec.flags = r.u32();
  rec.filename = r.cstring();
  return rec;
}

export function encodeMmap2(rec: Mmap2Record, w: ByteWriter): void {
  const start = w.pos;
  w.i32(rec.pid).i32(rec.tid).u64(rec.addr).u64(rec.len).u64(rec.pgoff);
  if (rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    const id = rec.buildId ?? new Uint8Array(0);
    const raw = new Uint8Array(20);
    if (rec.buildIdRaw) raw.set(rec.buildIdRaw.subarray(0, 20));
    raw.set(id.subarray(0, 20));
    w.u8(id.length).u8(0).u16(0).bytes(raw);
  } else {
    w.u32(rec.maj ?? 0)
      .u32(rec.min ?? 0)
      .u64(rec.ino ?? 0n)
      .u64(rec.inoGeneration ?? 0n);
  }
  w.u32(rec.prot).u32(rec.flags).cstring(rec.filename);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
