import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { RecordHead } from './common.js';

/** PERF_RECORD_AUXTRACE_INFO (70): u32 type; u32 reserved; u64 priv[] (to the end). */
export interface AuxtraceInfoRecord extends RecordHead {
  kind: 'auxtrace_info';
  auxType: number;
  priv: bigint[];
}
export function decodeAuxtraceInfo(r: ByteReader, h: RecordHead): AuxtraceInfoRecord {
  const auxType = r.u32();
  r.u32();
  const priv: bigint[] = [];
  while (r.remaining >= 8) priv.push(r.u64());
  return { kind: 'auxtrace_info', ...h, auxType, priv };
}
export function encodeAuxtraceInfo(rec: AuxtraceInfoRecord, w: ByteWriter): void {
  w.u32(rec.auxType).u32(0);
  for (const p of rec.priv) w.u64(p);
}

/**
 * PERF_RECORD_AUXTRACE (71): u64 size, offset, reference; u32 idx, tid, cpu, reserved.
 * `size` bytes of trace data FOLLOW the record (not counted in header.size);
 * the reader hands them over as RawRecord.auxData.
 */
export interface AuxtraceRecord extends RecordHead {
  kind: 'auxtrace';
  dataSize: bigint;
  offset: bigint;
  reference: bigint;
  idx: number;
  tid: number;
  cpu: number;
  data?: Uint8Array;
}
export function decodeAuxtrace(r: ByteReader, h: RecordHead): AuxtraceRecord {
  const rec: AuxtraceRecord = {
    kind: 'auxtrace',
    ...h,
    dataSize: r.u64(),
    offset: r.u64(),
    reference: r.u64(),
    idx: r.u32(),
    tid: r.i32(),
    cpu: r.i32(),
  };
  r.u32();
  return rec;
}
export function encodeAuxtrace(rec: AuxtraceRecord, w: ByteWriter): void {
  w.u64(rec.dataSize).u64(rec.offset).u64(rec.reference).u32(rec.idx).i32(rec.tid).i32(rec.cpu).u32(0);
}

/**
 * PERF_RECORD_AUXTRACE_ERROR (72): u32 type, code, cpu, pid, tid, fmt; u64 ip;
 * u64 time (fmt ≥ 2 era, always present in the struct); char msg[64];
 * u32 machine_pid, vcpu (fmt ≥ 2, when the record holds them).
 */
export interface AuxtraceErrorRecord extends RecordHead {
  kind: 'auxtrace_error';
  errType: number;
  code: number;
  cpu: number;
  pid: number;
  tid: number;
  fmt: number;
  ip: bigint;
  time: bigint;
  msg: string;
  machinePid?: number;
  vcpu?: number;
}
export function decodeAuxtraceError(r: ByteReader, h: RecordHead): AuxtraceErrorRecord {
  const rec: AuxtraceErrorRecord = {
    kind: 'auxtrace_error',
    ...h,
    errType: r.u32(),
    code: r.u32(),
    cpu: r.i32(),
    pid: r.i32(),
    tid: r.i32(),
    fmt: r.u32(),
    ip: r.u64(),
    time: r.u64(),
    msg: r.cstring(Math.min(64, r.remaining)),
  };
  if (r.remaining >= 8) {
    rec.machinePid = r.u32();
    rec.vcpu = r.u32();
  }
  return rec;
}
export function encodeAuxtraceError(rec: AuxtraceErrorRecord, w: ByteWriter): void {
  const msg = new Uint8Array(64);
  msg.set(Buffer.from(rec.msg, 'utf8').subarray(0, 63));
  w.u32(rec.errType)
    .u32(rec.code)
    .i32(rec.cpu)
    .i32(rec.pid)
    .i32(rec.tid)
    .u32(rec.fmt)
    .u64(rec.ip)
    .u64(rec.time)
    .bytes(msg);
  if (rec.machinePid !== undefined) w.u32(rec.machinePid).u32(rec.vcpu ?? 0);
}
