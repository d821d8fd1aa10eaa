/**
 * Where one CPU's trace bytes come from. The decoder sees the CPU's AUXTRACE
 * buffers back to back as one byte range [0, size) (perf decodes a queue's
 * buffers in order, joining packets split across them); a source hands out
 * pieces of that range on request, so only a window of it is ever in memory.
 *
 * Reads are synchronous on purpose: the flow decoder's state machine is
 * synchronous and looks ahead of the packet it is on (PSB+ probes, a PSB
 * search over bad bytes), so it must be able to get more bytes at any point
 * rather than only where it could pause for an await.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { FormatError } from '../../io/errors.js';

export interface TraceSource {
  /** Bytes in the whole trace (the sum of its buffers' sizes). */
  readonly size: number;
  /** The whole trace when it is already in memory: the window then uses it directly. */
  readonly whole?: Uint8Array;
  /** Copy trace bytes [from, from + n) into `into` at `at`; from + n ≤ size. */
  read(from: number, into: Uint8Array, at: number, n: number): void;
  /** Release what the source holds open (a file descriptor); a later read opens it again. */
  close(): void;
}

/** A trace already in memory (a raw PT file, a test's bytes). */
export function memoryTrace(bytes: Uint8Array): TraceSource {
  return {
    size: bytes.length,
    whole: bytes,
    read(from, into, at, n) {
      into.set(bytes.subarray(from, from + n), at);
    },
    close() {},
  };
}

/** All of a trace in one array (for tools that want the bytes, e.g. to write a raw PT file: memory grows with it). */
export function readWholeTrace(src: TraceSource): Uint8Array {
  if (src.whole) return src.whole;
  const out = new Uint8Array(src.size);
  src.read(0, out, 0, src.size);
  src.close();
  return out;
}

/** One AUXTRACE buffer of a queue: where its data sits in the file, or the data itself (pipe input). */
export interface QueueBuffer {
  /** File offset of the buffer's data (just after its AUXTRACE record). */
  dataOffset: number;
  size: number;
  /** The bytes, when the input could not be read again at dataOffset (a pipe). */
  data?: Uint8Array;
}

/**
 * A CPU's queue of AUXTRACE buffers read from the perf.data file on demand
 * (pread at each buffer's data offset): memory holds only what the decoder's
 * window asks for, whatever the file size.
 */
export class QueueTrace implements TraceSource {
  readonly size: number;
  /** Start of each buffer in the trace's byte range. */
  private readonly starts: number[] = [];
  private fd: number | undefined;
  /** Index of the buffer the last read started in (reads move forward). */
  private at = 0;

  constructor(
    private readonly path: string,
    private readonly buffers: readonly QueueBuffer[],
  ) {
    let pos = 0;
    for (const b of buffers) {
      this.starts.push(pos);
      pos += b.size;
    }
    this.size = pos;
  }

  read(from: number, into: Uint8Array, at: number, n: number): void {
    let i = this.bufferAt(from);
    let off = from - this.starts[i]!;
    let dst = at;
    let left = n;
    while (left > 0) {
      const b = this.buffers[i]!;
      const take = Math.min(left, b.size - off);
      if (b.data) into.set(b.data.subarray(off, off + take), dst);
      else this.pread(into, dst, take, b.dataOffset + off);
      dst += take;
      left -= take;
      i++;
      off = 0;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** The buffer holding trace offset `from` (searching from the last one: the window reads in order). */
  private bufferAt(from: number): number {
    let i = this.starts[this.at]! <= from ? this.at : 0;
    while (i + 1 < this.starts.length && this.starts[i + 1]! <= from) i++;
    this.at = i;
    return i;
  }

  private pread(into: Uint8Array, at: number, n: number, pos: number): void {
    this.fd ??= openSync(this.path, 'r');
    let done = 0;
    while (done < n) {
      const got = readSync(this.fd, into, at + done, n - done, pos + done);
      if (got <= 0) {
        throw new FormatError({
          kind: 'truncated',
          offset: pos + done,
          structure: 'AUXTRACE payload',
          file: this.path,
          expected: `${n - done} more bytes`,
          actual: 'end of file',
        });
      }
      done += got;
    }
  }
}
