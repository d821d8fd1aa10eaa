import { SampleType, ReadFormat, PERF_SAMPLE_BRANCH_HW_INDEX } from '../abi/sample-format.js';
import { attrFlag, type EventAttr } from '../abi/event-attr.js';

/**
 * What one attr implies for the records it produces, computed once per attr
 * (after linux-perf-event-reader's RecordParseInfo), so that `timestamp()` and
 * the id used to find a record's attr read one u64 without parsing the record.
 *
 * Offsets into a SAMPLE count from the record start (header included);
 * offsets into the sample_id_all trailer of other kernel records count back
 * from the record end (the trailer is parsed from the END of the record).
 */
export interface AttrLayout {
  attr: EventAttr;
  le: boolean;
  sampleType: bigint;
  readFormat: bigint;
  sampleIdAll: boolean;
  /** Bytes of sample_id trailer on non-SAMPLE kernel records (0 without sample_id_all). */
  trailerSize: number;
  /** Offset of TIME in a SAMPLE from the record start, or -1. */
  sampleTimeOffset: number;
  /** Offset of TIME in the trailer, counted back from the record end, or -1. */
  trailerTimeFromEnd: number;
  /** perf's evsel id_pos: u64 index of the id in a SAMPLE body, or -1 (no ID/IDENTIFIER). */
  idPos: number;
  /** perf's evsel is_pos: u64 index of the id counted back from the end of other records, or -1. */
  isPos: number;
  /** Branch stack has the hw_idx word (branch_sample_type HW_INDEX). */
  branchHwIndex: boolean;
  /** popcount(sample_regs_user), popcount(sample_regs_intr). */
  nrRegsUser: number;
  nrRegsIntr: number;
}

export function popcount64(v: bigint): number {
  let n = 0;
  while (v) {
    n += Number(v & 1n);
    v >>= 1n;
  }
  return n;
}

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

/** Build the layout for one attr in a file of byte order `le`. */
export function attrLayout(attr: EventAttr, le: boolean): AttrLayout {
  const t = attr.sampleType;
  const sampleIdAll = attrFlag(attr, 'sample_id_all');
  // trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER (uapi perf_event.h struct sample_id)
  let trailer = 0;
  const parts: bigint[] = [
    SampleType.TID,
    SampleType.TIME,
    SampleType.ID,
    SampleType.STREAM_ID,
    SampleType.CPU,
    SampleType.IDENTIFIER,
  ];
  for (const p of parts) if (has(t, p)) trailer += 8;
  let trailerTimeFromEnd = -1;
  if (sampleIdAll && has(t, SampleType.TIME)) {
    let after = 0;
    for (const p of [SampleType.ID, SampleType.STREAM_ID, SampleType.CPU, SampleType.IDENTIFIER])
      if (has(t, p)) after += 8;
    trailerTimeFromEnd = after + 8;
  }
  let sampleTimeOffset = -1;
  if (has(t, SampleType.TIME)) {
    let off = 8;
    for (const p of [SampleType.IDENTIFIER, SampleType.IP, SampleType.TID]) if (has(t, p)) off += 8;
    sampleTimeOffset = off;
  }
  return {
    attr,
    le,
    sampleType: t,
    readFormat: attr.readFormat,
    sampleIdAll,
    trailerSize: sampleIdAll ? trailer : 0,
    sampleTimeOffset,
    trailerTimeFromEnd,
    idPos: calcIdPos(t),
    isPos: calcIsPos(t),
    branchHwIndex: (attr.branchSampleType & PERF_SAMPLE_BRANCH_HW_INDEX) !== 0n,
    nrRegsUser: popcount64(attr.sampleRegsUser),
    nrRegsIntr: popcount64(attr.sampleRegsIntr),
  };
}

/** perf __evsel__calc_id_pos */
export function calcIdPos(t: bigint): number {
  if (has(t, SampleType.IDENTIFIER)) return 0;
  if (!has(t, SampleType.ID)) return -1;
  let idx = 0;
  for (const p of [SampleType.IP, SampleType.TID, SampleType.TIME, SampleType.ADDR]) if (has(t, p)) idx++;
  return idx;
}

/** perf __evsel__calc_is_pos */
export function calcIsPos(t: bigint): number {
  if (has(t, SampleType.IDENTIFIER)) return 1;
  if (!has(t, SampleType.ID)) return -1;
  let idx = 1;
  if (has(t, SampleType.CPU)) idx++;
  if (has(t, SampleType.STREAM_ID)) idx++;
  return idx;
}

/** Bytes of one read_format value block (non-group) or per-member entry (group). */
export function readFormatEntrySize(rf: bigint): number {
  return 8 + (has(rf, ReadFormat.ID) ? 8 : 0) + (has(rf, ReadFormat.LOST) ? 8 : 0);
}
