/**
 * ptxed's `--pt FILE[:FROM[-TO]]`: the trace is the file's bytes from FROM
 * (to TO), as ptxed's preprocess_filename and load_file read it; offsets in
 * the output count from FROM. A suffix that is not a range is part of the
 * file name, as in ptxed.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';

// strtoull with base 0: hex after 0x, octal after 0, else decimal
const NUM = '(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)';
const RANGE = new RegExp(`^${NUM}(?:-${NUM})?$`);

function num(s: string): number {
  if (/^0[xX]/.test(s)) return Number.parseInt(s.slice(2), 16);
  if (s.length > 1 && s.startsWith('0')) return Number.parseInt(s.slice(1), 8);
  return Number(s);
}

/** The file and range a `--raw-pt` argument names. */
export function parsePtFileRange(arg: string): { file: string; from: number; to?: number } {
  const i = arg.lastIndexOf(':');
  const m = i < 0 ? null : RANGE.exec(arg.slice(i + 1));
  if (!m) return { file: arg, from: 0 };
  const from = num(m[1] ?? '0');
  if (m[2] === undefined) return { file: arg.slice(0, i), from };
  const to = num(m[2]);
  if (to <= from) throw new UsageError(`--raw-pt ${arg}: bad range (the end must follow the start)`);
  return { file: arg.slice(0, i), from, to };
}

/** The trace bytes a `--raw-pt FILE[:FROM[-TO]]` argument names (ptxed's load_pt). */
export function readPtFileRange(arg: string): Uint8Array {
  const r = parsePtFileRange(arg);
  const bytes = new Uint8Array(readFileSync(r.file));
  if (r.from >= bytes.length) throw new UsageError(`--raw-pt ${arg}: bad offset 0x${r.from.toString(16)}`);
  if (r.to !== undefined && r.to > bytes.length)
    throw new UsageError(`--raw-pt ${arg}: bad range 0x${r.to.toString(16)} (the file has ${bytes.length} bytes)`);
  return bytes.subarray(r.from, r.to);
}
