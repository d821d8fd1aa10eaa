/**
 * perfpoke's one home for hex text of bytes and numbers, as perf prints them.
 * Every layer above io uses these instead of its own copy.
 */

/** Bytes as one hex string without blanks: "0f1f440000" (JSON, messages, names). */
export function hexString(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Lowercase hex bytes separated by spaces: "0f 1f 44 00 00". */
export function hexBytes(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (i ? ' ' : '') + hex2(b[i]!);
  return s;
}

/** One byte, two digits: perf's "%02x". */
export function hex2(n: number): string {
  return n.toString(16).padStart(2, '0');
}

/** A 64-bit value right-aligned in 16 columns: perf's "%16lx". */
export function hex16(v: bigint): string {
  return v.toString(16).padStart(16);
}

/** A 64-bit value in 16 digits, zero-filled: perf's "%016lx". */
export function hex016(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/**
 * Hex digits (no 0x, at most 16, already validated) as a bigint. V8 parses
 * `BigInt('0x…')` from the string slowly (about 3 µs each, measured on the
 * 121 k lines of /proc/kallsyms: 345 ms against 40–60 ms this way): the two
 * 32-bit halves are parsed as numbers and joined.
 */
export function hexToBigInt(hex: string): bigint {
  const n = hex.length;
  if (n <= 8) return BigInt(Number.parseInt(hex, 16));
  const hi = Number.parseInt(hex.slice(0, n - 8), 16);
  const lo = Number.parseInt(hex.slice(n - 8), 16);
  return (BigInt(hi) << 32n) | BigInt(lo);
}
