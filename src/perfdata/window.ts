import type { FileHandle } from 'node:fs/promises';
import { FormatError } from '../io/errors.js';

/**
 * Reads up to `len` bytes into buf[off..]; returns how many (0 = end of input). A fill over a file may also
 * `seek`: continue at absolute offset `pos` (false, nothing moved, when `pos` is past the file's end).
 */
export type FillFn = ((buf: Uint8Array, off: number, len: number) => Promise<number>) & {
  seek?: (pos: number) => boolean;
};

/** Default window: records are ≤ 64 KiB, so a few MiB keeps reads large and memory fixed. */
export const DEFAULT_WINDOW = 4 << 20;

/**
 * A fixed-size window sliding over a sequential input (file region or pipe).
 * `pos` is the absolute offset of the first unread byte. Views returned by
 * `peek` stay valid until the next `ensure` (which may move bytes to the front).
 */
export class Window {
  private buf: Uint8Array;
  private start = 0;
  private end = 0;
  private eof = false;
  pos: number;
  private readonly fill: FillFn;
  /** Absolute end of the readable region (Infinity for a stream). */
  readonly limit: number;
  readonly structure: string;
  /** What `limit` bounds, for messages: "data section" or "file". */
  region = 'data section';

  constructor(fill: FillFn, startOffset: number, limit = Infinity, size = DEFAULT_WINDOW, structure = 'data') {
    this.fill = fill;
    this.pos = startOffset;
    this.limit = limit;
    this.buf = new Uint8Array(size);
    this.structure = structure;
  }

  get available(): number {
    return this.end - this.start;
  }

  /**
   * Make n bytes available at `pos`. Returns false only when the input ends
   * exactly at `pos` (clean end); throws FormatError 'truncated' when it ends
   * inside the n bytes.
   */
  async ensure(n: number, what = this.structure): Promise<boolean> {
    if (this.end - this.start >= n) return true;
    if (n > this.buf.length) {
      const nb = new Uint8Array(Math.max(n, this.buf.length * 2));
      nb.set(this.buf.subarray(this.start, this.end));
      this.end -= this.start;
      this.start = 0;
      this.buf = nb;
    } else if (this.start + n > this.buf.length) {
      this.buf.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    while (this.end - this.start < n && !this.eof) {
      const want = Math.min(this.buf.length - this.end, this.limit - (this.pos + (this.end - this.start)));
      if (want <= 0) {
        this.eof = true;
        break;
      }
      const got = await this.fill(this.buf, this.end, want);
      if (got <= 0) this.eof = true;
      else this.end += got;
    }
    const have = this.end - this.start;
    if (have >= n) return true;
    if (have === 0) return false;
    throw new FormatError({
      kind: 'truncated',
      offset: this.pos,
      structure: what,
      expected: `${n} bytes`,
      actual: `(only ${have} left in the ${this.limit === Infinity ? 'input' : this.region})`,
    });
  }

  /** The u32 at `at` bytes ahead (call ensure first): byte loads, no view object (a record header per call). */
  u32At(at: number, le: boolean): number {
    const b = this.buf;
    const h = this.start + at;
    return le
      ? (b[h]! | (b[h + 1]! << 8) | (b[h + 2]! << 16) | (b[h + 3]! << 24)) >>> 0
      : ((b[h]! << 24) | (b[h + 1]! << 16) | (b[h + 2]! << 8) | b[h + 3]!) >>> 0;
  }

  /** The u16 at `at` bytes ahead (call ensure first). */
  u16At(at: number, le: boolean): number {
    const b = this.buf;
    const h = this.start + at;
    return le ? b[h]! | (b[h + 1]! << 8) : (b[h]! << 8) | b[h + 1]!;
  }

  /** The window's array and where the next byte is in it: the same bytes as `peek`, with no view made. */
  get array(): Uint8Array {
    return this.buf;
  }
  get offset(): number {
    return this.start;
  }

  /** A view of the next n bytes (call ensure first). */
  peek(n: number): Uint8Array {
    return this.buf.subarray(this.start, this.start + n);
  }

  advance(n: number): void {
    this.start += n;
    this.pos += n;
  }

  /**
   * Step over the next n bytes without keeping them (a payload nobody reads). A fill that can seek moves
   * past them without reading; otherwise, or when the input ends inside them (the error readPayload gives),
   * they pass through the window.
   */
  async skip(n: number, what: string): Promise<void> {
    const past = this.pos + n;
    if (n > this.available && !this.eof && past <= this.limit && this.fill.seek?.(past)) {
      this.pos = past;
      this.start = this.end = 0;
      return;
    }
    this.checkPayload(n, what);
    let left = n;
    while (left > 0) {
      if (!(await this.ensure(1, what))) this.payloadEnded(left, what);
      const take = Math.min(left, this.available);
      this.advance(take);
      left -= take;
    }
  }

  /**
   * Read exactly n bytes into a new array (a payload after a record: AUXTRACE
   * data, tracing data). The array grows as data arrives, so a bogus size in a
   * pipe costs no more memory than the input really holds.
   */
  async readPayload(n: number, what: string): Promise<Uint8Array> {
    this.checkPayload(n, what);
    const chunks: Uint8Array[] = [];
    let left = n;
    while (left > 0) {
      if (!(await this.ensure(1, what)) || this.available === 0) this.payloadEnded(left, what);
      const take = Math.min(left, this.available);
      chunks.push(this.peek(take).slice());
      this.advance(take);
      left -= take;
    }
    if (chunks.length === 1) return chunks[0]!;
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }

  /** A payload of n bytes must fit in the region. */
  private checkPayload(n: number, what: string): void {
    if (this.limit !== Infinity && this.pos + n > this.limit) {
      throw new FormatError({
        kind: 'bad-size',
        offset: this.pos,
        structure: what,
        actual: n,
        expected: `≤ ${this.limit - this.pos} bytes left in the ${this.region}`,
      });
    }
  }

  private payloadEnded(left: number, what: string): never {
    throw new FormatError({
      kind: 'truncated',
      offset: this.pos,
      structure: what,
      expected: `${left} more payload bytes`,
    });
  }
}

/** A seekable FillFn reading a file from absolute offset `from` on; `size`: the file's size (seeks stop there). */
export function fileFill(fh: FileHandle, from: number, size: number): FillFn {
  let pos = from;
  const fill: FillFn = async (buf, off, len) => {
    const { bytesRead } = await fh.read(buf, off, len, pos);
    pos += bytesRead;
    return bytesRead;
  };
  fill.seek = (to) => {
    if (to > size) return false;
    pos = to;
    return true;
  };
  return fill;
}

/** A FillFn over a Node readable stream (pipe mode, stdin). */
export function streamFill(s: NodeJS.ReadableStream): FillFn {
  const it = (s as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  let pending: Uint8Array | undefined;
  return async (buf, off, len) => {
    if (!pending || pending.length === 0) {
      const n = await it.next();
      if (n.done) return 0;
      pending = typeof n.value === 'string' ? Buffer.from(n.value, 'latin1') : n.value;
    }
    const take = Math.min(len, pending.length);
    buf.set(pending.subarray(0, take), off);
    pending = pending.subarray(take);
    return take;
  };
}
