import { FormatError } from '../io/errors.js';

/** Reads up to `len` bytes into buf[off..]; returns how many (0 = end of input). */
export type FillFn = (buf: Uint8Array, off: number, len: number) => Promise<number>;

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

  /** A view of the next n bytes (call ensure first). */
  peek(n: number): Uint8Array {
    return this.buf.subarray(this.start, this.start + n);
  }

  advance(n: number): void {
    this.start += n;
    this.pos += n;
  }

  /**
   * Read exactly n bytes into a new array (a payload after a record: AUXTRACE
   * data, tracing data). The array grows as data arrives, so a bogus size in a
   * pipe costs no more memory than the input really holds.
   */
  async readPayload(n: number, what: string): Promise<Uint8Array> {
    const at = this.pos;
    if (this.limit !== Infinity && at + n > this.limit) {
      throw new FormatError({
        kind: 'bad-size',
        offset: at,
        structure: what,
        actual: n,
        expected: `≤ ${this.limit - at} bytes left in the ${this.region}`,
      });
    }
    const chunks: Uint8Array[] = [];
    let left = n;
    while (left > 0) {
      const step = Math.min(left, this.buf.length);
      if (!(await this.ensure(Math.min(step, 1), what)) || this.available === 0) {
        throw new FormatError({
          kind: 'truncated',
          offset: this.pos,
          structure: what,
          expected: `${left} more payload bytes`,
        });
      }
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
