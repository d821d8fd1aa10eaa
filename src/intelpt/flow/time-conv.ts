/**
 * TSC ↔ perf time with the AUXTRACE_INFO parameters (time_shift, time_mult,
 * time_zero), exactly as perf's tsc_to_perf_time / perf_time_to_tsc
 * (tools/perf/util/tsc.c) — including their rounding, since comparisons of a
 * poke's time against TSC packets decide when the poke takes effect. Also
 * the TSC frequency perf derives from them for CBR samples and estimates.
 */
export interface PtTimeConv {
  shift: number;
  mult: number;
  zero: bigint;
}

export function tscToPerfTime(tsc: bigint, tc: PtTimeConv): bigint {
  const shift = BigInt(tc.shift);
  const mult = BigInt(tc.mult);
  const quot = tsc >> shift;
  const rem = tsc & ((1n << shift) - 1n);
  return BigInt.asUintN(64, tc.zero + quot * mult + ((rem * mult) >> shift));
}

export function perfTimeToTsc(ns: bigint, tc: PtTimeConv): bigint {
  const shift = BigInt(tc.shift);
  const mult = BigInt(tc.mult);
  const t = BigInt.asUintN(64, ns - tc.zero);
  const quot = t / mult;
  const rem = t % mult;
  return (quot << shift) + (rem << shift) / mult;
}

/** intel-pt.c's max_non_turbo_ratio and cbr2khz (0 when the recording gives no time conversion). */
export interface CbrScale {
  maxNonTurbo: number;
  cbr2khz: number;
}

/**
 * intel_pt_process_auxtrace_info: the TSC frequency from the time conversion
 * (intel_pt_ns_to_ticks of one second); the maximum non-turbo ratio from
 * AUXTRACE_INFO, else TSC frequency / 100 MHz rounded; cbr2khz = TSC kHz / ratio.
 */
export function cbrScale(tc: PtTimeConv | undefined, maxNonTurbo: number | undefined): CbrScale {
  let ratio = maxNonTurbo ?? 0;
  if (!tc?.mult) return { maxNonTurbo: ratio, cbr2khz: 0 };
  const ns = 1_000_000_000n;
  const mult = BigInt(tc.mult);
  const shift = BigInt(tc.shift);
  const tscFreq = ((ns / mult) << shift) + ((ns % mult) << shift) / mult;
  if (!ratio) ratio = Number((tscFreq + 50_000_000n) / 100_000_000n);
  if (!ratio) return { maxNonTurbo: 0, cbr2khz: 0 };
  return { maxNonTurbo: ratio, cbr2khz: Number((tscFreq / BigInt(ratio) / 1000n) & 0xffffffffn) };
}
