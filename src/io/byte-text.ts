/**
 * Text built straight into one reused byte buffer. Formatters on hot paths
 * (a line per record or per instruction) append their pieces here instead of
 * making a string per piece and joining them: no garbage per line, and the
 * output sink hands the bytes on without encoding a string first. Numbers are
 * written as perf's printf would (decimal, hex, padded), from plain numbers or
 * from a u64's two u32 halves, so no BigInt is needed for them.
 */
import { copyView, viewOf } from './byte-copy.js';

const HEX = new Uint8Array(16);
for (let i = 0; i < 16; i++) HEX[i] = '0123456789abcdef'.charCodeAt(i);
const SPACE = 0x20;
const ZERO = 0x30;
const TWO32 = 0x1_0000_0000;

export class ByteText {
  /** The bytes so far are buf[0, length). */
  buf: Buffer;
  /** `buf` as a DataView, for copyView (made again whenever `buf` is replaced). */
  dv: DataView;
  length = 0;
  /** Digits are built backwards here before they are copied in. */
  private readonly digits = new Uint8Array(24);

  constructor(size = 1 << 17) {
    this.buf = Buffer.allocUnsafe(size);
    this.dv = viewOf(this.buf);
  }

  /** Make room for `k` more bytes. */
  reserve(k: number): void {
    if (this.length + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + k) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.length);
    this.buf = b;
    this.dv = viewOf(b);
  }

  /** Forget the bytes (the buffer is kept for the next ones). */
  clear(): void {
    this.length = 0;
  }

  /** The bytes so far, as a view that the next append may overwrite. */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  /** The bytes so far as a string (tests, in-memory sinks). */
  toString(): string {
    return this.buf.toString('utf8', 0, this.length);
  }

  /** A string, UTF-8 encoded (ASCII is copied byte by byte: short strings cost less than a call into C++). */
  str(s: string): void {
    const len = s.length;
    this.reserve(len * 3);
    if (len > 64) {
      this.length += this.buf.write(s, this.length, 'utf8');
      return;
    }
    const b = this.buf;
    let n = this.length;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) {
        this.length += b.write(s, this.length, 'utf8');
        return;
      }
      b[n++] = c;
    }
    this.length = n;
  }

  /** One byte (an ASCII character code). */
  byte(c: number): void {
    this.reserve(1);
    this.buf[this.length++] = c;
  }

  /** `count` copies of byte `c` (padding). */
  fill(c: number, count: number): void {
    if (count <= 0) return;
    this.reserve(count);
    this.buf.fill(c, this.length, this.length + count);
    this.length += count;
  }

  /** Bytes copied from `src[start, end)`. */
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    const k = end - start;
    this.reserve(k);
    this.buf.set(src.subarray(start, end), this.length);
    this.length += k;
  }

  /**
   * All of `src` copied in: bytes(src) without the view it makes, for hot paths copying cached pieces of
   * text (short ones byte by byte, cheaper than a call into the copy builtin).
   */
  append(src: Uint8Array): void {
    const k = src.length;
    if (this.length + k > this.buf.length) this.reserve(k);
    let n = this.length;
    if (k > 24) {
      this.buf.set(src, n);
      this.length = n + k;
      return;
    }
    const b = this.buf;
    for (let i = 0; i < k; i++) b[n++] = src[i]!;
    this.length = n;
  }

  /** `n` bytes copied from `from` (a DataView) at `start`: the short-copy path of cached texts (byte-copy.ts). */
  copyFrom(from: DataView, start: number, n: number): void {
    if (this.length + n > this.buf.length) this.reserve(n);
    copyView(this.dv, this.length, from, start, n);
    this.length += n;
  }

  /**
   * A non-negative integer below 2^53 in decimal, right-aligned in `width`
   * columns with `pad` (' ' or '0'): printf's "%*lu" / "%0*lu". The digits go
   * straight into the buffer, last first, once their count is known: a
   * `script` line has four or five numbers, and the round trip through the
   * digit buffer was a tenth of its formatting.
   */
  dec(v: number, width = 0, pad = SPACE): void {
    if (v > 0x7fffffff) {
      this.put(this.digitsOf(v), width, pad);
      return;
    }
    let x = v | 0;
    const len = decimalLength(x);
    const fill = width > len ? width - len : 0;
    if (this.length + fill + len > this.buf.length) this.reserve(fill + len);
    const b = this.buf;
    let n = this.length;
    for (let i = 0; i < fill; i++) b[n++] = pad;
    n += len;
    this.length = n;
    do {
      const q = (x / 10) | 0;
      b[--n] = ZERO + (x - q * 10);
      x = q;
    } while (x > 0);
  }

  /** v's decimal digits into digits[k..]; returns k. Below 2^31 in int32 steps (a division by 10 is a multiply). */
  private digitsOf(v: number): number {
    const d = this.digits;
    let k = d.length;
    while (v > 0x7fffffff) {
      const q = Math.floor(v / 10);
      d[--k] = ZERO + (v - q * 10);
      v = q;
    }
    let x = v | 0;
    do {
      const q = (x / 10) | 0;
      d[--k] = ZERO + (x - q * 10);
      x = q;
    } while (x > 0);
    return k;
  }

  /** A signed integer (|v| below 2^53) in decimal: printf's "%*ld". */
  decSigned(v: number, width = 0): void {
    if (v >= 0) {
      this.dec(v, width);
      return;
    }
    if (v >= -0x7fffffff) {
      // the sign, then the digits: one column more than the magnitude's
      const len = decimalLength(-v) + 1;
      if (width > len) this.fill(SPACE, width - len);
      this.byte(0x2d);
      this.dec(-v);
      return;
    }
    let k = this.digitsOf(-v);
    this.digits[--k] = 0x2d;
    this.put(k, width, SPACE);
  }

  /** A u64 given as two u32 halves, in decimal (exact past 2^53 too). */
  dec64(hi: number, lo: number, width = 0, pad = SPACE): void {
    if (hi < 0x20_0000) {
      this.dec(hi * TWO32 + lo, width, pad);
      return;
    }
    // Split at 10^8 in exact steps: v = hi·2^32 + lo, long division on 16-bit limbs.
    const d = this.digits;
    let k = d.length;
    let limbs = [hi >>> 16, hi & 0xffff, lo >>> 16, lo & 0xffff];
    while (limbs.some((x) => x !== 0)) {
      let rem = 0;
      const next: number[] = [];
      for (const x of limbs) {
        const cur = rem * 0x10000 + x;
        const q = Math.floor(cur / 10);
        rem = cur - q * 10;
        next.push(q);
      }
      d[--k] = ZERO + rem;
      limbs = next;
    }
    this.put(k, width, pad);
  }

  /** A non-negative integer below 2^53 in lowercase hex: printf's "%*lx" / "%0*lx". */
  hex(v: number, width = 0, pad = SPACE): void {
    if (v >= TWO32) {
      this.hex64(Math.floor(v / TWO32), v >>> 0, width, pad);
      return;
    }
    const d = this.digits;
    let k = d.length;
    let x = v >>> 0;
    do {
      d[--k] = HEX[x & 15]!;
      x >>>= 4;
    } while (x !== 0);
    this.put(k, width, pad);
  }

  /** A u64 given as two u32 halves, in lowercase hex without leading zeros, padded to `width`. */
  hex64(hi: number, lo: number, width = 0, pad = SPACE): void {
    const d = this.digits;
    let k = d.length;
    let x = lo >>> 0;
    let h = hi >>> 0;
    if (h === 0) {
      do {
        d[--k] = HEX[x & 15]!;
        x >>>= 4;
      } while (x !== 0);
    } else {
      for (let i = 0; i < 8; i++) {
        d[--k] = HEX[x & 15]!;
        x >>>= 4;
      }
      do {
        d[--k] = HEX[h & 15]!;
        h >>>= 4;
      } while (h !== 0);
    }
    this.put(k, width, pad);
  }

  /**
   * A u64 given as two u32 halves as exactly 16 lowercase hex digits: printf's
   * "%016lx" (callchain entries, one per line of a -D dump), without the
   * digit-buffer round trip of hex64.
   */
  hex16(hi: number, lo: number): void {
    this.reserve(16);
    const b = this.buf;
    const n = this.length;
    let h = hi >>> 0;
    let x = lo >>> 0;
    for (let i = 7; i >= 0; i--) {
      b[n + 8 + i] = HEX[x & 15]!;
      x >>>= 4;
      b[n + i] = HEX[h & 15]!;
      h >>>= 4;
    }
    this.length = n + 16;
  }

  /** A bigint (any sign, any size) in decimal or hex; for the rare values past the number paths. */
  big(v: bigint, radix: 10 | 16 = 10, width = 0, pad = SPACE): void {
    const s = v.toString(radix);
    if (s.length < width) this.fill(pad, width - s.length);
    this.str(s);
  }

  /** Copy digits[k..] in, after padding to `width`. */
  private put(k: number, width: number, pad: number): void {
    const d = this.digits;
    const len = d.length - k;
    const fill = width > len ? width - len : 0;
    this.reserve(fill + len);
    const b = this.buf;
    let n = this.length;
    for (let i = 0; i < fill; i++) b[n++] = pad;
    for (let i = k; i < d.length; i++) b[n++] = d[i]!;
    this.length = n;
  }
}

/** How many decimal digits a non-negative int32 has. */
function decimalLength(x: number): number {
  let len = 1;
  for (let p = 10; x >= p && len < 10; p *= 10) len++;
  return len;
}

/** ASCII codes the formatters pad with. */
export const PAD_SPACE = SPACE;
export const PAD_ZERO = ZERO;
