/**
 * Times as perf script prints them: seconds and microseconds of the perf
 * clock ("1000.000001", %5lu.%06lu, truncated not rounded), and back.
 */
export function formatPerfTime(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const us = (ns % 1_000_000_000n) / 1000n;
  return `${s}.${us.toString().padStart(6, '0')}`;
}

/** Full-precision seconds: "1000.000001234". */
export function formatNsTime(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const f = ns % 1_000_000_000n;
  return `${s}.${f.toString().padStart(9, '0')}`;
}

/**
 * "1000.000001" (seconds, up to 9 decimals) or "1000000001000" (raw ns).
 * Returns undefined for anything else.
 */
export function parsePerfTime(text: string): bigint | undefined {
  const t = text.trim();
  let m = /^(\d+)\.(\d{1,9})$/.exec(t);
  if (m) return BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!.padEnd(9, '0'));
  m = /^(\d+)$/.exec(t);
  if (m) return BigInt(m[1]!);
  return undefined;
}

/** "0xffffffff81000000" or "ffffffff81000000" → bigint; undefined when not hex. */
export function parseAddr(text: string): bigint | undefined {
  const t = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{1,16}$/.test(t)) return undefined;
  return BigInt('0x' + t);
}
