/**
 * Intel PT address filtering as libipt 2.3 configures it (struct
 * pt_conf_addr_filter, pt_filter_addr_check in pt_config.c): four ranges
 * [ADDRn_A, ADDRn_B], each with its IA32_RTIT_CTL.ADDRn_CFG (0 unused,
 * 1 FilterEn: trace only inside, 2 TraceStop: stop tracing on entry).
 * libipt uses it only for the SKL014 erratum (a TIP.PGD without an IP after
 * a direct branch out of the filter region), see insn-walk.ts.
 */

export interface AddrFilterRange {
  cfg: number;
  a: bigint;
  b: bigint;
}

export interface AddrFilter {
  ranges: [AddrFilterRange, AddrFilterRange, AddrFilterRange, AddrFilterRange];
}

export function newAddrFilter(): AddrFilter {
  const r = (): AddrFilterRange => ({ cfg: 0, a: 0n, b: 0n });
  return { ranges: [r(), r(), r(), r()] };
}

/** Any ADDRn_CFG set (libipt's `addr_filter.config.addr_cfg != 0`). */
export function filterConfigured(f: AddrFilter): boolean {
  return f.ranges.some((r) => r.cfg !== 0);
}

/**
 * pt_filter_addr_check: true when `ip` may be traced — inside a FilterEn
 * range (or no FilterEn range is configured) and in no TraceStop range.
 */
export function filterAllows(f: AddrFilter, ip: bigint): boolean {
  let haveFilter = false;
  let inFilter = false;
  for (const r of f.ranges) {
    const inside = r.a <= ip && ip <= r.b;
    if (r.cfg === 1) {
      haveFilter = true;
      if (inside) inFilter = true;
    } else if (r.cfg === 2 && inside) return false;
  }
  return !haveFilter || inFilter;
}
