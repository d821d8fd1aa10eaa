/**
 * perfpoke's one time formatter: times as perf prints them, seconds and
 * microseconds of the perf clock ("1000.000001", perf's "%5lu.%06lu" without
 * the padding, truncated not rounded; `perf script --ns` gives the nanosecond
 * form), and back. perf script, dump, decode, pokes, check and the JSON
 * `time` field all print through here.
 */
import { PAD_SPACE, PAD_ZERO, type ByteText } from '../io/byte-text.js';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** timestamp__scnprintf_usec: "secs.usecs". */
export function formatPerfTime(ns: bigint): string {
  // exact in a double below 2^53 ns (104 days of uptime), and much cheaper than BigInt division
  if (ns <= SAFE && ns >= 0n) return formatPerfTimeNumber(Number(ns));
  const s = ns / 1_000_000_000n;
  const us = (ns % 1_000_000_000n) / 1000n;
  return `${s}.${us.toString().padStart(6, '0')}`;
}

/** formatPerfTime for a time below 2^53 ns, given as a number. */
export function formatPerfTimeNumber(n: number): string {
  const secs = secondsOf(n);
  const usecs = Math.floor((n - secs * 1e9) / 1000);
  return `${secs}.${usecs < 100000 ? String(usecs).padStart(6, '0') : usecs}`;
}

/** Whole seconds in n ns (n below 2^53). */
function secondsOf(n: number): number {
  const secs = Math.floor(n / 1e9);
  return n - secs * 1e9 < 0 ? secs - 1 : secs; // n/1e9 can round up to the next integer just below it
}

/**
 * formatPerfTime of the u64 time (hi, lo) (u32 halves), right-aligned in
 * `width` columns, appended to out: no bigint and no string below 2^53 ns.
 */
export function formatPerfTimeTo(out: ByteText, hi: number, lo: number, width = 0): void {
  if (hi >= 0x20_0000) {
    const s = formatPerfTime((BigInt(hi) << 32n) | BigInt(lo));
    out.fill(PAD_SPACE, width - s.length);
    out.str(s);
    return;
  }
  const n = hi * 0x1_0000_0000 + lo;
  const secs = secondsOf(n);
  let digits = 1;
  for (let x = secs; x >= 10; x = Math.floor(x / 10)) digits++;
  out.fill(PAD_SPACE, width - digits - 7);
  out.dec(secs);
  out.byte(0x2e);
  out.dec(Math.floor((n - secs * 1e9) / 1000), 6, PAD_ZERO);
}

/** Full-precision seconds: "1000.000001234". */
export function formatNsTime(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const f = ns % 1_000_000_000n;
  return `${s}.${f.toString().padStart(9, '0')}`;
}

/**
 * perf's time syntax (`perf script --time`, the times perf prints): seconds
 * with up to 9 decimals, "5123.006792" or "5123". Returns ns, or undefined.
 */
export function parsePerfTime(text: string): bigint | undefined {
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text.trim());
  if (!m) return undefined;
  return BigInt(m[1]!) * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** Raw nanoseconds of the perf clock ("5123006792000"). */
export function parseNsTime(text: string): bigint | undefined {
  const m = /^(\d+)$/.exec(text.trim());
  return m ? BigInt(m[1]!) : undefined;
}

/** "0xffffffff81000000" or "ffffffff81000000" → bigint; undefined when not hex. */
export function parseAddr(text: string): bigint | undefined {
  const t = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{1,16}$/.test(t)) return undefined;
  return BigInt(`0x${t}`);
}
