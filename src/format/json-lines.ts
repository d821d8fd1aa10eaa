/**
 * perfpoke's one JSON convention, shared by every `--json` output:
 *
 * - JSON Lines: one object per line, each with a `type` field naming its
 *   kind (schemas in docs/json/<type>.schema.json); a command with a summary
 *   ends with one object whose type ends in `summary` (or is the verdict).
 * - Addresses, masks and ids: `"0x…"` strings (lower-case hex, no padding).
 * - Times: `time_ns`, the decimal nanosecond string, beside `time`, the text
 *   perf prints (`5123.006792`).
 * - Counts: JSON numbers.
 * - Bytes: hex strings without blanks (`"e91b762dff"`).
 *
 * The helpers here turn library values into those shapes; nothing else in
 * the tree should format a JSON value by hand.
 */
import { formatPerfTime } from '../machine/time-format.js';
import { hexString } from '../io/hex.js';

/** A JSON Lines object: `type` first, the rest as given. */
export type JsonLine = { type: string } & Record<string, unknown>;

/** `"0x…"` for an address, mask or id. */
export function jsonHex(v: bigint | number): string {
  return `0x${v.toString(16)}`;
}

/** Bytes as one hex string without blanks. */
export function jsonBytes(b: Uint8Array): string {
  return hexString(b);
}

/** `{ time, time_ns }`: perf's text beside the exact nanoseconds. */
export function jsonTime(ns: bigint): { time: string; time_ns: string } {
  return { time: formatPerfTime(ns), time_ns: ns.toString() };
}

/**
 * One line of JSON. bigint values that reach here (a field nobody
 * converted) become decimal strings rather than throwing.
 */
export function jsonLine(obj: JsonLine): string {
  return `${JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`;
}
