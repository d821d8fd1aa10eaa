/**
 * TSC ↔ perf time with the AUXTRACE_INFO parameters (time_shift, time_mult,
 * time_zero), exactly as perf's tsc_to_perf_time / perf_time_to_tsc
 * (tools/perf/util/tsc.c) — including their rounding, since comparisons of a
 * poke's time against TSC packets decide when the poke takes effect.
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
