import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { readPerfString, readVersion1, writePerfString } from './perf-string.js';
import type { FeatureData } from './types.js';

/**
 * The one-value features: the uname strings, nrcpus, total_mem, sample_time,
 * clockid, dir_format, compressed, clock_data (header.c FEAT_PROCESS_STR_FUN
 * and the process_* functions of the same names).
 */
export const STRING_FEATURES = ['hostname', 'osrelease', 'version', 'arch', 'cpudesc', 'cpuid'] as const;
export type StringFeature = (typeof STRING_FEATURES)[number];

export function decodeStringFeature(kind: StringFeature, r: ByteReader): FeatureData {
  return { kind, value: readPerfString(r, kind) };
}

export function decodeNrcpus(r: ByteReader): FeatureData {
  // write_nrcpus: max present cpu ("avail") first, then online
  const avail = r.u32();
  return { kind: 'nrcpus', avail, online: r.u32() };
}

export function decodeTotalMem(r: ByteReader): FeatureData {
  return { kind: 'total_mem', kb: r.u64() };
}

export function decodeSampleTime(r: ByteReader): FeatureData {
  const first = r.u64();
  return { kind: 'sample_time', first, last: r.u64() };
}

export function decodeClockid(r: ByteReader): FeatureData {
  return { kind: 'clockid', resNs: r.u64() };
}

export function decodeDirFormat(r: ByteReader): FeatureData {
  return { kind: 'dir_format', version: r.u64() };
}

export function decodeCompressed(r: ByteReader): FeatureData {
  return { kind: 'compressed', version: r.u32(), type: r.u32(), level: r.u32(), ratio: r.u32(), mmapLen: r.u32() };
}

export function decodeClockData(r: ByteReader): FeatureData {
  readVersion1(r, 'CLOCK_DATA version');
  return { kind: 'clock_data', version: 1, clockid: r.u32(), todNs: r.u64(), clockidNs: r.u64() };
}

/** Encode the variants of this module; returns false for other kinds. */
export function encodeScalar(f: FeatureData, w: ByteWriter): boolean {
  switch (f.kind) {
    case 'hostname':
    case 'osrelease':
    case 'version':
    case 'arch':
    case 'cpudesc':
    case 'cpuid':
      writePerfString(w, f.value);
      return true;
    case 'nrcpus':
      w.u32(f.avail).u32(f.online);
      return true;
    case 'total_mem':
      w.u64(f.kb);
      return true;
    case 'sample_time':
      w.u64(f.first).u64(f.last);
      return true;
    case 'clockid':
      w.u64(f.resNs);
      return true;
    case 'dir_format':
      w.u64(f.version);
      return true;
    case 'compressed':
      w.u32(f.version).u32(f.type).u32(f.level).u32(f.ratio).u32(f.mmapLen);
      return true;
    case 'clock_data':
      w.u32(f.version).u32(f.clockid).u64(f.todNs).u64(f.clockidNs);
      return true;
    default:
      return false;
  }
}
