import { FormatError } from './errors.js';

/**
 * An endian-aware cursor over a Uint8Array window. Byte order is decided once
 * (by the file's magic) and every read uses it: nothing is swapped in place.
 * `base` is the absolute file offset of bytes[0], so errors name real offsets.
 *
 * Reads past the end throw FormatError{kind:'truncated'} naming `structure`;
 * a failed read does not move the cursor.
 */
export class ByteReader {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  readonly le: boolean;
  readonly base: number;
  pos = 0;
  structure = 'data';

  constructor(bytes: Uint8Array, le: boolean, base = 0, structure = 'data') {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.le = le;
    this.base = base;
    this.structure = structure;
  }

  get length(): number {
    return this.bytes.byteLength;
  }
  get remaining(): number {
    return this.bytes.byteLength - this.pos;
  }

  /** Throws 'truncated' unless n more bytes are available at the cursor. */
  need(n: number, what = this.structure): void {
    if (n < 0 || this.pos + n > this.bytes.byteLength) {
      throw new FormatError({
        kind: 'truncated',
        offset: this.base + this.pos,
        structure: what,
        expected: `${n} more bytes`,
        actual: `only ${Math.max(0, this.bytes.byteLength - this.pos)} left`,
      });
    }
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, this.le);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, this.le);
    this.pos += 4;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, this.le);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, this.le);
    this.pos += 8;
    return v;
  }
  i64(): bigint {
    this.need(8);
    const v = this.view.getBigInt64(this.pos, this.le);
    this.pos += 8;
    return v;
  }
  /** A u64 that is a size or offset: must fit in a JS number. */
  u64n(what = this.structure): number {
    const at = this.pos;
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
      this.pos = at;
      throw new FormatError({
        kind: 'bad-size',
        offset: this.base + at,
        structure: what,
        actual: v,
        expected: '< 2^53',
      });
    }
    return Number(v);
  }
  /** A view into the window (no copy). */
  borrow(n: number): Uint8Array {
    this.need(n);
    const b = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** A copy that outlives the window. */
  copy(n: number): Uint8Array {
    return this.borrow(n).slice();
  }
  /** A NUL-terminated string inside a fixed field of n bytes (n defaults to the rest). */
  cstring(n = this.remaining): string {
    const b = this.borrow(n);
    const end = b.indexOf(0);
    return Buffer.from(b.buffer, b.byteOffset, end < 0 ? b.length : end).toString('utf8');
  }
  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
  seek(pos: number): void {
    if (pos < 0 || pos > this.bytes.byteLength) {
      throw new FormatError({
        kind: 'truncated',
        offset: this.base + pos,
        structure: this.structure,
        expected: `offset within ${this.bytes.byteLength} bytes`,
      });
    }
    this.pos = pos;
  }
  /** A sub-reader over the next n bytes, advancing past them. */
  sub(n: number, structure = this.structure): ByteReader {
    const at = this.pos;
    const b = this.borrow(n);
    return new ByteReader(b, this.le, this.base + at, structure);
  }
}
