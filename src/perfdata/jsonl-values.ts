/**
 * JSON forms of the values our decoders produce: u64 (bigint) as "0x…" hex
 * strings, byte arrays as plain hex strings (docs/writer.md). Used by
 * `perfpoke header --json` and the JSON-lines converter.
 */
import { hexString } from '../io/hex.js';

export function fromHex(s: string, what = 'hex string'): Uint8Array {
  if (!/^([0-9a-fA-F]{2})*$/.test(s))
    throw new Error(`${what}: not an even-length hex string: ${JSON.stringify(s.slice(0, 40))}`);
  return new Uint8Array(Buffer.from(s, 'hex'));
}

export function u64ToJson(v: bigint): string {
  return `0x${v.toString(16)}`;
}

/** Parse a u64 written as "0x…" hex or a decimal string (or a safe JS number). */
export function u64FromJson(v: unknown, what = 'u64'): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(v)) {
    const n = BigInt(v);
    if (n < 1n << 64n) return n;
  }
  throw new Error(`${what}: expected a u64 as "0x…" hex or decimal string, got ${JSON.stringify(v)}`);
}

export function toJsonValue(v: unknown): unknown {
  if (typeof v === 'bigint') return u64ToJson(v);
  if (v instanceof Uint8Array) return hexString(v);
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) o[k] = toJsonValue(x);
    return o;
  }
  return v;
}
