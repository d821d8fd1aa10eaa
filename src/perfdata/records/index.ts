import { ByteReader } from '../../io/byte-reader.js';
import { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { RecordType, recordTypeName, RFC_TEXT_POKE_TYPE, PERF_RECORD_USER_TYPE_START } from '../../abi/record-type.js';
import type { AttrLayout } from '../layout.js';
import { decodeSampleId, encodeSampleId } from '../sample-id.js';
import type { BodyDecoder, BodyEncoder, DecodeContext, RecordHead } from './common.js';
import { decodeMmap, encodeMmap, decodeMmap2, encodeMmap2, type MmapRecord, type Mmap2Record } from './mmap.js';
import { decodeComm, encodeComm, type CommRecord } from './comm.js';
import { decodeFork, decodeExit, encodeTask, type ForkRecord, type ExitRecord } from './task.js';
import {
  decodeLost,
  encodeLost,
  decodeLostSamples,
  encodeLostSamples,
  type LostRecord,
  type LostSamplesRecord,
} from './lost.js';
import { decodeThrottle, encodeThrottle, type ThrottleRecord } from './throttle.js';
import { decodeRead, encodeRead, type ReadRecord } from './read.js';
import { decodeSample, encodeSample, type SampleRecord } from './sample.js';
import {
  decodeAux,
  encodeAux,
  decodeItraceStart,
  encodeItraceStart,
  decodeAuxOutputHwId,
  encodeAuxOutputHwId,
  type AuxRecord,
  type ItraceStartRecord,
  type AuxOutputHwIdRecord,
} from './aux.js';
import {
  decodeSwitch,
  encodeSwitch,
  decodeSwitchCpuWide,
  encodeSwitchCpuWide,
  type SwitchRecord,
  type SwitchCpuWideRecord,
} from './switch.js';
import { decodeNamespaces, encodeNamespaces, type NamespacesRecord } from './namespaces.js';
import { decodeKsymbol, encodeKsymbol, type KsymbolRecord } from './ksymbol.js';
import { decodeBpfEvent, encodeBpfEvent, type BpfEventRecord } from './bpf-event.js';
import { decodeCgroup, encodeCgroup, type CgroupRecord } from './cgroup.js';
import {
  decodeTextPoke,
  encodeTextPoke,
  decodeRfcTextPoke,
  encodeRfcTextPoke,
  type TextPokeRecord,
  type RfcTextPokeRecord,
} from './text-poke.js';
import {
  decodeHeaderAttr,
  encodeHeaderAttr,
  decodeEventType,
  encodeEventType,
  type HeaderAttrRecord,
  type EventTypeRecord,
} from './header-attr.js';
import { decodeTracingData, encodeTracingData, type TracingDataRecord } from './tracing-data.js';
import { decodeBuildId, encodeBuildId, type BuildIdRecord } from './build-id.js';
import {
  decodeFinishedRound,
  encodeFinishedRound,
  decodeFinishedInit,
  encodeFinishedInit,
  type FinishedRoundRecord,
  type FinishedInitRecord,
} from './finished.js';
import { decodeIdIndex, encodeIdIndex, type IdIndexRecord } from './id-index.js';
import {
  decodeAuxtraceInfo,
  encodeAuxtraceInfo,
  decodeAuxtrace,
  encodeAuxtrace,
  decodeAuxtraceError,
  encodeAuxtraceError,
  type AuxtraceInfoRecord,
  type AuxtraceRecord,
  type AuxtraceErrorRecord,
} from './auxtrace.js';
import {
  decodeThreadMap,
  encodeThreadMap,
  decodeCpuMap,
  encodeCpuMap,
  type ThreadMapRecord,
  type CpuMapRecord,
} from './maps.js';
import {
  decodeStatConfig,
  encodeStatConfig,
  decodeStat,
  encodeStat,
  decodeStatRound,
  encodeStatRound,
  type StatConfigRecord,
  type StatRecord,
  type StatRoundRecord,
} from './stat.js';
import { decodeEventUpdate, encodeEventUpdate, type EventUpdateRecord } from './event-update.js';
import { decodeTimeConv, encodeTimeConv, type TimeConvRecord } from './time-conv.js';
import { decodeHeaderFeature, encodeHeaderFeature, type HeaderFeatureRecord } from './header-feature.js';
import {
  decodeCompressed,
  encodeCompressed,
  decodeCompressed2,
  encodeCompressed2,
  type CompressedRecord,
  type Compressed2Record,
} from './compressed.js';
import { decodeUnknown, encodeUnknown, type UnknownRecord } from './unknown.js';

/** Every decoded record, discriminated by `kind` (snake_case of perf's PERF_RECORD_* name). */
export type PerfRecord =
  | MmapRecord
  | LostRecord
  | CommRecord
  | ExitRecord
  | ThrottleRecord
  | ForkRecord
  | ReadRecord
  | SampleRecord
  | Mmap2Record
  | AuxRecord
  | ItraceStartRecord
  | LostSamplesRecord
  | SwitchRecord
  | SwitchCpuWideRecord
  | NamespacesRecord
  | KsymbolRecord
  | BpfEventRecord
  | CgroupRecord
  | TextPokeRecord
  | RfcTextPokeRecord
  | AuxOutputHwIdRecord
  | HeaderAttrRecord
  | EventTypeRecord
  | TracingDataRecord
  | BuildIdRecord
  | FinishedRoundRecord
  | IdIndexRecord
  | AuxtraceInfoRecord
  | AuxtraceRecord
  | AuxtraceErrorRecord
  | ThreadMapRecord
  | CpuMapRecord
  | StatConfigRecord
  | StatRecord
  | StatRoundRecord
  | EventUpdateRecord
  | TimeConvRecord
  | HeaderFeatureRecord
  | CompressedRecord
  | FinishedInitRecord
  | Compressed2Record
  | UnknownRecord;

export type PerfRecordKind = PerfRecord['kind'];

interface Entry {
  decode: BodyDecoder<PerfRecord>;
  encode: BodyEncoder<never>;
}

const e = <R extends PerfRecord>(decode: BodyDecoder<R>, encode: BodyEncoder<R>): Entry => ({
  decode,
  encode: encode as BodyEncoder<never>,
});

/** One decoder/encoder pair per type id (perf's perf_event__swap_ops[] shape). */
export const recordTable: ReadonlyMap<number, Entry> = new Map<number, Entry>([
  [RecordType.MMAP, e(decodeMmap, encodeMmap)],
  [RecordType.LOST, e(decodeLost, encodeLost)],
  [RecordType.COMM, e(decodeComm, encodeComm)],
  [RecordType.EXIT, e(decodeExit, encodeTask)],
  [RecordType.THROTTLE, e(decodeThrottle, encodeThrottle)],
  [RecordType.UNTHROTTLE, e(decodeThrottle, encodeThrottle)],
  [RecordType.FORK, e(decodeFork, encodeTask)],
  [RecordType.READ, e(decodeRead, encodeRead)],
  [RecordType.SAMPLE, e(decodeSample, encodeSample)],
  [RecordType.MMAP2, e(decodeMmap2, encodeMmap2)],
  [RecordType.AUX, e(decodeAux, encodeAux)],
  [RecordType.ITRACE_START, e(decodeItraceStart, encodeItraceStart)],
  [RecordType.LOST_SAMPLES, e(decodeLostSamples, encodeLostSamples)],
  [RecordType.SWITCH, e(decodeSwitch, encodeSwitch)],
  [RecordType.SWITCH_CPU_WIDE, e(decodeSwitchCpuWide, encodeSwitchCpuWide)],
  [RecordType.NAMESPACES, e(decodeNamespaces, encodeNamespaces)],
  [RecordType.KSYMBOL, e(decodeKsymbol, encodeKsymbol)],
  [RecordType.BPF_EVENT, e(decodeBpfEvent, encodeBpfEvent)],
  [RecordType.CGROUP, e(decodeCgroup, encodeCgroup)],
  [RecordType.TEXT_POKE, e(decodeTextPoke, encodeTextPoke)],
  [RecordType.AUX_OUTPUT_HW_ID, e(decodeAuxOutputHwId, encodeAuxOutputHwId)],
  [RecordType.HEADER_ATTR, e(decodeHeaderAttr, encodeHeaderAttr)],
  [RecordType.HEADER_EVENT_TYPE, e(decodeEventType, encodeEventType)],
  [RecordType.HEADER_TRACING_DATA, e(decodeTracingData, encodeTracingData)],
  [RecordType.HEADER_BUILD_ID, e(decodeBuildId, encodeBuildId)],
  [RecordType.FINISHED_ROUND, e(decodeFinishedRound, encodeFinishedRound)],
  [RecordType.ID_INDEX, e(decodeIdIndex, encodeIdIndex)],
  [RecordType.AUXTRACE_INFO, e(decodeAuxtraceInfo, encodeAuxtraceInfo)],
  [RecordType.AUXTRACE, e(decodeAuxtrace, encodeAuxtrace)],
  [RecordType.AUXTRACE_ERROR, e(decodeAuxtraceError, encodeAuxtraceError)],
  [RecordType.THREAD_MAP, e(decodeThreadMap, encodeThreadMap)],
  [RecordType.CPU_MAP, e(decodeCpuMap, encodeCpuMap)],
  [RecordType.STAT_CONFIG, e(decodeStatConfig, encodeStatConfig)],
  [RecordType.STAT, e(decodeStat, encodeStat)],
  [RecordType.STAT_ROUND, e(decodeStatRound, encodeStatRound)],
  [RecordType.EVENT_UPDATE, e(decodeEventUpdate, encodeEventUpdate)],
  [RecordType.TIME_CONV, e(decodeTimeConv, encodeTimeConv)],
  [RecordType.HEADER_FEATURE, e(decodeHeaderFeature, encodeHeaderFeature)],
  [RecordType.COMPRESSED, e(decodeCompressed, encodeCompressed)],
  [RecordType.FINISHED_INIT, e(decodeFinishedInit, encodeFinishedInit)],
  [RecordType.COMPRESSED2, e(decodeCompressed2, encodeCompressed2)],
]);

const RFC_ENTRY = e(decodeRfcTextPoke, encodeRfcTextPoke);
const UNKNOWN_ENTRY = e(decodeUnknown, encodeUnknown);

/** True for kernel record types that carry the sample_id_all trailer (every type < 64 except SAMPLE). */
export function hasSampleIdTrailer(type: number): boolean {
  return type < PERF_RECORD_USER_TYPE_START && type !== RecordType.SAMPLE;
}

const align8 = (n: number): number => (n + 7) & ~7;

function isZero(bytes: Uint8Array, from: number): boolean {
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * Where the body of a self-sized kernel record ends (offset from the record
 * start), for the types whose length the body itself states: TEXT_POKE,
 * KSYMBOL, BPF_EVENT. Undefined for every other type, or when the body is
 * too short to tell (the full decoder then reports it).
 *
 * Why: Linux 6.1's perf_event_text_poke_output() and
 * perf_event_ksymbol_output() add each consumer's sample_id size to a header
 * shared by all consumers and never reset it, so when several events listen
 * (perf and perfpoke at once) every consumer but the last gets header.size
 * too large, with the sample_id right after the body and zeros after it.
 * perf reads the sample_id from the end and prints time 0; reading it at the
 * body's end recovers the real time (seen in test/fixtures/real-kernel).
 * decodeRecord applies this only when everything after that sample_id is
 * zero, so a record with genuine extra fields keeps "the declared size is the
 * truth" (its sample_id read from the end).
 */
export function bodyEndOf(type: number, bytes: Uint8Array, le: boolean): number | undefined {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case RecordType.TEXT_POKE: {
      if (bytes.length < 20) return undefined;
      return 8 + align8(12 + dv.getUint16(16, le) + dv.getUint16(18, le));
    }
    case RecordType.KSYMBOL: {
      // addr u64, len u32, ksym_type u16, flags u16, name[] NUL-terminated, padded to 8
      const nul = bytes.indexOf(0, 24);
      if (bytes.length < 24 || nul < 0) return undefined;
      return 24 + align8(nul - 24 + 1);
    }
    case RecordType.BPF_EVENT:
      // type u16, flags u16, id u32, tag[8]
      return bytes.length < 24 ? undefined : 24;
    default:
      return undefined;
  }
}

/**
 * Where a kernel record's sample_id trailer ends: the record's end, except
 * for Linux 6.1's inflated records (see bodyEndOf), where it ends right after
 * the body's trailer. For readers that pick fields out of the trailer directly.
 */
export function trailerEndOf(type: number, bytes: Uint8Array, le: boolean, trailerSize: number): number {
  if (type !== RecordType.TEXT_POKE && type !== RecordType.KSYMBOL && type !== RecordType.BPF_EVENT)
    return bytes.length;
  const natural = bodyEndOf(type, bytes, le);
  if (natural === undefined || natural + trailerSize >= bytes.length || !isZero(bytes, natural + trailerSize))
    return bytes.length;
  return natural + trailerSize;
}

function entryFor(type: number, rfc: boolean): { entry: Entry; known: boolean } {
  if (rfc && type === RFC_TEXT_POKE_TYPE) return { entry: RFC_ENTRY, known: true };
  const entry = recordTable.get(type);
  return entry ? { entry, known: true } : { entry: UNKNOWN_ENTRY, known: false };
}

/** perf's structure name for messages: "MMAP2 (10)". */
export function structureName(type: number): string {
  return `${recordTypeName(type)} (${type})`;
}

/**
 * Decode one whole record (`bytes` = header + body, exactly header.size long)
 * found at `fileOffset`. Unknown types yield `{kind:'unknown'}`; malformed bodies throw
 * FormatError naming the offset and structure.
 */
export function decodeRecord(bytes: Uint8Array, fileOffset: number, ctx: DecodeContext): PerfRecord {
  const r = new ByteReader(bytes, ctx.le, fileOffset, 'perf_event_header');
  const type = r.u32();
  const misc = r.u16();
  const size = r.u16();
  const head: RecordHead = { type, misc, size, fileOffset };
  const { entry, known } = entryFor(type, ctx.textPokeAbi === 'rfc');
  const name = structureName(type);
  let bodyEnd = bytes.length;
  let trailer: ByteReader | undefined;
  const L = ctx.layout;
  let inflatedBy = 0;
  if (known && hasSampleIdTrailer(type) && L && L.trailerSize > 0) {
    bodyEnd = bytes.length - L.trailerSize;
    if (bodyEnd < 8) {
      throw new FormatError({
        kind: 'bad-size',
        offset: fileOffset,
        structure: name,
        actual: size,
        expected: `≥ ${8 + L.trailerSize} (header + sample_id)`,
      });
    }
    const natural =
      ctx.textPokeAbi === 'rfc' && type === RFC_TEXT_POKE_TYPE ? undefined : bodyEndOf(type, bytes, ctx.le);
    if (natural !== undefined && natural < bodyEnd && isZero(bytes, natural + L.trailerSize)) {
      inflatedBy = bodyEnd - natural;
      bodyEnd = natural;
    }
    trailer = new ByteReader(
      bytes.subarray(bodyEnd, bodyEnd + L.trailerSize),
      ctx.le,
      fileOffset + bodyEnd,
      `${name} sample_id`,
    );
  }
  const body = new ByteReader(bytes.subarray(8, bodyEnd), ctx.le, fileOffset + 8, name);
  const rec = entry.decode(body, head, ctx);
  if (trailer && L) (rec as { sampleId?: unknown }).sampleId = decodeSampleId(trailer, L);
  if (inflatedBy > 0) (rec as { inflatedBy?: number }).inflatedBy = inflatedBy;
  return rec;
}

export interface EncodeContext {
  /** Layout of the record's attr: decides the sample_id trailer and the sample/read fields. */
  layout?: AttrLayout;
}

/**
 * Write a whole record: header (size patched to what was written), body, and
 * the sample_id trailer when the layout has sample_id_all and the type carries one.
 * The size must fit header.size's u16: throws FormatError 'bad-size' otherwise.
 */
export function encodeRecord(rec: PerfRecord, w: ByteWriter, ctx: EncodeContext = {}): void {
  // bodies pad strings relative to their own start; write aligned, then copy when w is not
  const t = w.pos % 8 === 0 ? w : new ByteWriter(w.le, 512);
  const start = t.pos;
  t.u32(rec.type).u16(rec.misc).u16(0);
  const rfc = rec.kind === 'text_poke' && 'abi' in rec && rec.abi === 'rfc';
  const { entry, known } = entryFor(rec.type, rfc);
  const use = rec.kind === 'unknown' ? UNKNOWN_ENTRY : entry;
  (use.encode as BodyEncoder<PerfRecord>)(rec, t, ctx.layout);
  if (known && rec.kind !== 'unknown' && hasSampleIdTrailer(rec.type) && ctx.layout && ctx.layout.trailerSize > 0) {
    encodeSampleId((rec as { sampleId?: object }).sampleId ?? {}, t, ctx.layout);
  }
  const size = t.pos - start;
  if (size > 0xffff) {
    throw new FormatError({
      kind: 'bad-size',
      offset: start,
      structure: structureName(rec.type),
      actual: size,
      expected: '≤ 65535 (u16 header.size)',
    });
  }
  t.patchU16(start + 6, size);
  if (t !== w) w.bytes(t.finish());
}

/** Encode one record into fresh bytes. */
export function encodeRecordBytes(rec: PerfRecord, le: boolean, ctx: EncodeContext = {}): Uint8Array {
  const w = new ByteWriter(le, 256);
  encodeRecord(rec, w, ctx);
  return w.finish().slice();
}

export type { RecordHead, KernelRecordHead, DecodeContext } from './common.js';
export * from './mmap.js';
export * from './comm.js';
export * from './task.js';
export * from './lost.js';
export * from './throttle.js';
export * from './read.js';
export * from './read-format.js';
export * from './sample.js';
export * from './aux.js';
export * from './switch.js';
export * from './namespaces.js';
export * from './ksymbol.js';
export * from './bpf-event.js';
export * from './cgroup.js';
export * from './text-poke.js';
export * from './header-attr.js';
export * from './tracing-data.js';
export * from './build-id.js';
export * from './finished.js';
export * from './id-index.js';
export * from './auxtrace.js';
export * from './maps.js';
export * from './stat.js';
export * from './event-update.js';
export * from './time-conv.js';
export * from './header-feature.js';
export * from './compressed.js';
export * from './unknown.js';
