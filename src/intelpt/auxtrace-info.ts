import { FormatError } from '../io/errors.js';

/**
 * The private u64 array of PERF_RECORD_AUXTRACE_INFO for intel_pt, laid out
 * as perf's tools/perf/util/intel-pt.h enum (INTEL_PT_PMU_TYPE ...
 * INTEL_PT_FILTER_STR_LEN), followed by the address filter string (its
 * length + 1 rounded up to 8 bytes) when FILTER_STR_LEN is non-zero.
 * Older perf wrote fewer fields: everything after PER_CPU_MMAPS is optional
 * (perf's intel_pt_has()). Words after the known ones are kept in `extra`.
 * Other AUX types (BTS, CoreSight, SPE...) are kept raw.
 */
export const PERF_AUXTRACE_UNKNOWN = 0;
export const PERF_AUXTRACE_INTEL_PT = 1;
export const PERF_AUXTRACE_INTEL_BTS = 2;

/** Indexes into priv[], perf's spelling. */
export const INTEL_PT_PRIV = {
  PMU_TYPE: 0,
  TIME_SHIFT: 1,
  TIME_MULT: 2,
  TIME_ZERO: 3,
  CAP_USER_TIME_ZERO: 4,
  TSC_BIT: 5,
  NORETCOMP_BIT: 6,
  HAVE_SCHED_SWITCH: 7,
  SNAPSHOT_MODE: 8,
  PER_CPU_MMAPS: 9,
  MTC_BIT: 10,
  MTC_FREQ_BITS: 11,
  TSC_CTC_N: 12,
  TSC_CTC_D: 13,
  CYC_BIT: 14,
  MAX_NONTURBO_RATIO: 15,
  FILTER_STR_LEN: 16,
} as const;

/** Intel PT AUXTRACE_INFO. Bit fields (tscBit, mtcBit...) are config masks, as perf stores them. */
export interface IntelPtAuxtraceInfo {
  type: 'intel_pt';
  pmuType: number;
  timeShift: number;
  timeMult: number;
  timeZero: bigint;
  capUserTimeZero: boolean;
  tscBit: bigint;
  noretcompBit: bigint;
  haveSchedSwitch: number;
  snapshotMode: boolean;
  perCpuMmaps: boolean;
  mtcBit?: bigint;
  mtcFreqBits?: number;
  tscCtcN?: number;
  tscCtcD?: number;
  cycBit?: bigint;
  maxNonTurboRatio?: number;
  /** The address filter (perf record --filter), when FILTER_STR_LEN is present. */
  filter?: string;
  /** priv words after the known fields (newer perf). */
  extra: bigint[];
}

export interface RawAuxtraceInfo {
  type: 'raw';
  auxType: number;
  priv: bigint[];
}

export type AuxtraceInfo = IntelPtAuxtraceInfo | RawAuxtraceInfo;

const MIN_FIELDS = INTEL_PT_PRIV.PER_CPU_MMAPS + 1;

/**
 * Decodes AUXTRACE_INFO's type and priv[] (the record body after the u32
 * type and u32 reserved). Throws FormatError when an intel_pt array is too
 * short for perf's minimum or the filter string runs past it; `offset` is
 * the record's file offset for the message.
 */
export function decodeAuxtracePriv(auxType: number, priv: bigint[], offset = 0): AuxtraceInfo {
  if (auxType !== PERF_AUXTRACE_INTEL_PT) return { type: 'raw', auxType, priv: priv.slice() };
  if (priv.length < MIN_FIELDS)
    throw new FormatError({
      kind: 'bad-size',
      offset,
      structure: 'AUXTRACE_INFO (70) intel_pt',
      actual: priv.length,
      expected: `≥ ${MIN_FIELDS} private u64 fields`,
    });
  const P = INTEL_PT_PRIV;
  const n = (i: number): number => Number(priv[i]!);
  const info: IntelPtAuxtraceInfo = {
    type: 'intel_pt',
    pmuType: n(P.PMU_TYPE),
    timeShift: n(P.TIME_SHIFT),
    timeMult: n(P.TIME_MULT),
    timeZero: priv[P.TIME_ZERO]!,
    capUserTimeZero: priv[P.CAP_USER_TIME_ZERO] !== 0n,
    tscBit: priv[P.TSC_BIT]!,
    noretcompBit: priv[P.NORETCOMP_BIT]!,
    haveSchedSwitch: n(P.HAVE_SCHED_SWITCH),
    snapshotMode: priv[P.SNAPSHOT_MODE] !== 0n,
    perCpuMmaps: priv[P.PER_CPU_MMAPS] !== 0n,
    extra: [],
  };
  // perf's intel_pt_has(): MTC..MAX_NONTURBO_RATIO came together (perf 4.3), FILTER_STR_LEN later
  if (priv.length > P.MAX_NONTURBO_RATIO) {
    info.mtcBit = priv[P.MTC_BIT]!;
    info.mtcFreqBits = n(P.MTC_FREQ_BITS);
    info.tscCtcN = n(P.TSC_CTC_N);
    info.tscCtcD = n(P.TSC_CTC_D);
    info.cycBit = priv[P.CYC_BIT]!;
    info.maxNonTurboRatio = n(P.MAX_NONTURBO_RATIO);
  }
  let next = priv.length > P.MAX_NONTURBO_RATIO ? P.MAX_NONTURBO_RATIO + 1 : MIN_FIELDS;
  if (priv.length > P.FILTER_STR_LEN) {
    const len = priv[P.FILTER_STR_LEN]!;
    next = P.FILTER_STR_LEN + 1;
    if (len) {
      const words = Number(((len + 1n + 7n) & ~7n) / 8n);
      if (len > BigInt(priv.length * 8) || next + words > priv.length)
        throw new FormatError({
          kind: 'bad-size',
          offset,
          structure: 'AUXTRACE_INFO (70) intel_pt filter',
          actual: len,
          expected: `≤ ${(priv.length - next) * 8 - 1} bytes`,
        });
      const bytes = new Uint8Array(words * 8);
      const dv = new DataView(bytes.buffer);
      for (let i = 0; i < words; i++) dv.setBigUint64(i * 8, priv[next + i]!, true);
      info.filter = Buffer.from(bytes.subarray(0, Number(len))).toString('utf8');
      next += words;
    } else info.filter = '';
  }
  info.extra = priv.slice(next);
  return info;
}

/** Encodes to [auxType, priv[]] — the inverse of decodeAuxtracePriv. */
export function encodeAuxtracePriv(info: AuxtraceInfo): { auxType: number; priv: bigint[] } {
  if (info.type === 'raw') return { auxType: info.auxType, priv: info.priv.slice() };
  const priv: bigint[] = [
    BigInt(info.pmuType),
    BigInt(info.timeShift),
    BigInt(info.timeMult),
    info.timeZero,
    info.capUserTimeZero ? 1n : 0n,
    info.tscBit,
    info.noretcompBit,
    BigInt(info.haveSchedSwitch),
    info.snapshotMode ? 1n : 0n,
    info.perCpuMmaps ? 1n : 0n,
  ];
  const hasMtc = info.mtcBit !== undefined || info.filter !== undefined;
  if (hasMtc) {
    priv.push(
      info.mtcBit ?? 0n,
      BigInt(info.mtcFreqBits ?? 0),
      BigInt(info.tscCtcN ?? 0),
      BigInt(info.tscCtcD ?? 0),
      info.cycBit ?? 0n,
      BigInt(info.maxNonTurboRatio ?? 0),
    );
  }
  if (info.filter !== undefined) {
    const s = Buffer.from(info.filter, 'utf8');
    priv.push(BigInt(s.length));
    if (s.length) {
      const words = (s.length + 1 + 7) >> 3;
      const bytes = new Uint8Array(words * 8);
      bytes.set(s);
      const dv = new DataView(bytes.buffer);
      for (let i = 0; i < words; i++) priv.push(dv.getBigUint64(i * 8, true));
    }
  }
  priv.push(...info.extra);
  return { auxType: PERF_AUXTRACE_INTEL_PT, priv };
}

/** perf -D's AUXTRACE_INFO lines for intel_pt (intel_pt_print_info), for pt-dump's header. */
export function formatIntelPtInfo(info: IntelPtAuxtraceInfo): string[] {
  const l = [
    `  PMU Type            ${info.pmuType}`,
    `  Time Shift          ${info.timeShift}`,
    `  Time Muliplier      ${info.timeMult}`,
    `  Time Zero           ${info.timeZero}`,
    `  Cap Time Zero       ${+info.capUserTimeZero}`,
    `  TSC bit             ${`0x${info.tscBit.toString(16)}`}`,
    `  NoRETComp bit       ${`0x${info.noretcompBit.toString(16)}`}`,
    `  Have sched_switch   ${info.haveSchedSwitch}`,
    `  Snapshot mode       ${+info.snapshotMode}`,
    `  Per-cpu maps        ${+info.perCpuMmaps}`,
  ];
  if (info.mtcBit !== undefined) {
    l.push(
      `  MTC bit             ${`0x${info.mtcBit.toString(16)}`}`,
      `  MTC freq bits       ${`0x${(info.mtcFreqBits ?? 0).toString(16)}`}`,
      `  TSC:CTC numerator   ${info.tscCtcN}`,
      `  TSC:CTC denominator ${info.tscCtcD}`,
      `  CYC bit             ${`0x${(info.cycBit ?? 0n).toString(16)}`}`,
      `  Max non-turbo ratio ${info.maxNonTurboRatio}`,
    );
  }
  if (info.filter !== undefined)
    l.push(`  Filter string len.  ${Buffer.byteLength(info.filter)}`, `  Filter string       ${info.filter}`);
  return l;
}
