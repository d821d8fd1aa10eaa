/**
 * `perfpoke image`'s listing: the kernel code over [addr, addr+len) as a CPU
 * saw it at a time (kcore_dir bytes with every poke up to then applied), one
 * line per instruction, `(no code: N bytes)` where the image has none; as
 * text or as JSON Lines (image_insn, image_gap, then image_summary).
 */
import { CodeImage } from '../machine/code-image.js';
import type { Machine } from '../machine/from-perf-data.js';
import { hexBytes } from '../io/hex.js';
import { formatNsTime, formatPerfTime } from '../machine/time-format.js';
import { disassemble } from '../x86/disasm.js';
import { jsonBytes, jsonHex, jsonLine, jsonTime } from './json-lines.js';

type Row = { addr: bigint; sym: string } & ({ bytes: Uint8Array; text: string } | { gap: number });

export interface ImageListing {
  addr: bigint;
  len: number;
  /** CodeImage.END: the end of the recording. */
  time: bigint;
  bytes: Uint8Array;
  complete: boolean;
  rows: Row[];
  pokesApplied: number;
  lastPokeTime: bigint | undefined;
  hasKcore: boolean;
  symbolize: (a: bigint) => string;
}

/** The code at `addr` for `len` bytes at `time`, disassembled run by run of existing bytes. */
export function imageListing(m: Machine, addr: bigint, len: number, time: bigint): ImageListing {
  const { bytes, live } = m.image.bytesAt(addr, len, time);
  const at = time === CodeImage.END ? undefined : { time, fileOffset: Number.MAX_SAFE_INTEGER };
  const symbolize = (a: bigint): string => m.symbolizer.symOff(a, at);
  const applied = m.image.pokesIn(addr, addr + BigInt(len), -CodeImage.END, time);
  const rows: Row[] = [];
  let i = 0;
  while (i < len) {
    let j = i;
    const isLive = live[i];
    while (j < len && live[j] === isLive) j++;
    const start = addr + BigInt(i);
    if (!isLive) rows.push({ addr: start, sym: symbolize(start), gap: j - i });
    else
      for (const insn of disassemble(bytes.subarray(i, j), start, symbolize))
        rows.push({ addr: insn.ip, sym: symbolize(insn.ip), bytes: insn.bytes, text: insn.text });
    i = j;
  }
  return {
    addr,
    len,
    time,
    bytes,
    complete: live.every(Boolean),
    rows,
    pokesApplied: applied.length,
    lastPokeTime: applied[applied.length - 1]?.poke.time,
    hasKcore: m.kcore !== undefined,
    symbolize,
  };
}

export function imageTextLines(l: ImageListing): string[] {
  const when = l.time === CodeImage.END ? 'end of recording' : formatNsTime(l.time);
  const last = l.lastPokeTime === undefined ? '' : `, last at ${formatPerfTime(l.lastPokeTime)}`;
  const out = [
    `${l.addr.toString(16)} ${l.symbolize(l.addr) || '?'} len ${l.len} at ${when}: ${l.pokesApplied} poke(s) ` +
      `applied${last}${l.hasKcore ? '' : ' (no kcore_dir: only poked bytes are known)'}`,
  ];
  for (const r of l.rows) {
    const [bytes, text] = 'gap' in r ? ['', `(no code: ${r.gap} bytes)`] : [hexBytes(r.bytes), r.text];
    out.push(`${r.addr.toString(16)} ${`<${r.sym || '?'}>`.padEnd(28)} ${bytes.padEnd(30)} ${text}`);
  }
  return out;
}

export function* imageJsonLines(l: ImageListing): Generator<string> {
  for (const r of l.rows) {
    if ('gap' in r) yield jsonLine({ type: 'image_gap', addr: jsonHex(r.addr), sym: r.sym, len: r.gap });
    else
      yield jsonLine({
        type: 'image_insn',
        addr: jsonHex(r.addr),
        sym: r.sym,
        bytes: jsonBytes(r.bytes),
        text: r.text,
      });
  }
  yield jsonLine({
    type: 'image_summary',
    addr: jsonHex(l.addr),
    sym: l.symbolize(l.addr),
    len: l.len,
    ...(l.time === CodeImage.END ? {} : jsonTime(l.time)),
    ...(l.complete ? { bytes: jsonBytes(l.bytes) } : {}),
    pokes_applied: l.pokesApplied,
    ...(l.lastPokeTime === undefined ? {} : { last_poke_time_ns: l.lastPokeTime.toString() }),
    kcore: l.hasKcore,
  });
}
