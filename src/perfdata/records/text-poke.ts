import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/**
 * PERF_RECORD_TEXT_POKE (20), the upstream ABI (Linux 5.9+):
 *
 *   u64 addr; u16 old_len; u16 new_len; u8 bytes[old_len + new_len];
 *   u8 pad[] so the record is 8-aligned; struct sample_id (sample_id_all)
 *
 * old_len 0 announces a new trampoline, new_len 0 its removal.
 */
export interface TextPokeRecord extends KernelRecordHead {
  kind: 'text_poke';
  abi?: 'final';
  addr: bigint;
  oldLen: number;
  newLen: number;
  oldBytes: Uint8Array;
  newBytes: Uint8Array;
}

/**
 * The seed patch's RFC form, read only with textPokeAbi 'rfc': type 19,
 * u64 addr; u16 len; u8 bytes[2*len] (old then new); padded; sample_id.
 */
export interface RfcTextPokeRecord extends KernelRecordHead {
  kind: 'text_poke';
  abi: 'rfc';
  addr: bigint;
  len: number;
  oldBytes: Uint8Array;
  newBytes: Uint8Array;
}

function tooLong(r: ByteReader, at: number, structure: string, need: number): FormatError {
  return new FormatError({
    kind: 'bad-size',
    offset: r.base + at,
    structure,
    actual: need,
    expected: `≤ ${r.length - at} bytes left in the record`,
  });
}

/** Throws FormatError 'bad-size' (at the old_len field) when old_len + new_len exceed the record. */
export function decodeTextPoke(r: ByteReader, h: RecordHead): TextPokeRecord {
  const addr = r.u64();
  const at = r.pos;
  const oldLen = r.u16();
  const newLen = r.u16();
  if (oldLen + newLen > r.remaining) throw tooLong(r, at, 'TEXT_POKE (20): old_len + new_len', oldLen + newLen);
  const oldBytes = r.copy(oldLen);
  const newBytes = r.copy(newLen);
  return { kind: 'text_poke', ...h, addr, oldLen, newLen, oldBytes, newBytes };
}

export function encodeTextPoke(rec: TextPokeRecord, w: ByteWriter): void {
  const start = w.pos;
  w.u64(rec.addr).u16(rec.oldBytes.length).u16(rec.newBytes.length).bytes(rec.oldBytes).bytes(rec.newBytes);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}

export function decodeRfcTextPoke(r: ByteReader, h: RecordHead): RfcTextPokeRecord {
  const addr = r.u64();
  const at = r.pos;
  const len = r.u16();
  if (2 * len > r.remaining) throw tooLong(r, at, 'TEXT_POKE (RFC, 19): 2 * len', 2 * len);
  const oldBytes = r.copy(len);
  const newBytes = r.copy(len);
  return { kind: 'text_poke', abi: 'rfc', ...h, addr, len, oldBytes, newBytes };
}

export function encodeRfcTextPoke(rec: RfcTextPokeRecord, w: ByteWriter): void {
  const start = w.pos;
  w.u64(rec.addr).u16(rec.len).bytes(rec.oldBytes).bytes(rec.newBytes);
  w.zeros((8 - ((w.pos - start) % 8)) % 8);
}
