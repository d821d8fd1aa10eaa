/**
 * perfpoke's one output sink: text for stdout or a file, buffered (one write
 * per ~64 KiB). Two ways to hand it on: `flush()` for async loops (script,
 * dump) returns a promise while stdout, a pipe, is full, so reading goes on
 * while the reader catches up; `{ sync: true }` (the synchronous decoders),
 * a file, or stdout redirected to a file are written with writeSync as the
 * buffer fills. A reader that goes away (`perfpoke script |
 * head`) ends the process quietly with the exit code so far, as perf does; a
 * file appears whole or not at all (a temp file, renamed at close).
 */
import { closeSync, fstatSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { TextSink } from '../format/text-sink.js';
import { ByteText } from '../io/byte-text.js';

const CHUNK = 1 << 16;

// async writes report a vanished reader as an 'error' event on stdout
let epipeHandled = false;
function quietOnEpipe(): void {
  if (epipeHandled) return;
  epipeHandled = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
}

function stdoutIsPipe(): boolean {
  try {
    const st = fstatSync(1);
    return st.isFIFO() || st.isSocket();
  } catch {
    return true;
  }
}

export class OutputSink implements TextSink {
  /** The text not yet handed on, as bytes (formatters may append to it directly). */
  readonly bytes = new ByteText(CHUNK * 2);
  private readonly fd: number;
  private readonly tmp: string | undefined;
  private readonly sync: boolean;
  private drained: Promise<void> | undefined;

  /** `path` undefined or '-': stdout. */
  constructor(
    private readonly path?: string,
    opts: { sync?: boolean } = {},
  ) {
    // stdout redirected to a file (or /dev/null): written in place, as a file output is; only a pipe or
    // socket, whose reader may lag, gets the async hand-over (a copy per chunk)
    this.sync = opts.sync === true || (path !== undefined && path !== '-') || !stdoutIsPipe();
    if (path === undefined || path === '-') {
      this.fd = 1;
      quietOnEpipe();
    } else {
      this.tmp = `${path}.tmp-${process.pid}`;
      this.fd = openSync(this.tmp, 'w');
    }
  }

  write = (s: string): void => {
    this.bytes.str(s);
    if (this.sync && this.bytes.length >= CHUNK) this.flush();
  };

  wrote(): void {
    if (this.sync && this.bytes.length >= CHUNK) this.flush();
  }

  /** Write one line (a newline is added). */
  line(s: string): void {
    this.write(`${s}\n`);
  }

  get pending(): number {
    return this.bytes.length;
  }

  /** Hand the buffer on; async mode: resolves once stdout has room again. */
  flush(): Promise<void> | undefined {
    if (this.bytes.length === 0) return this.drained;
    if (!this.sync) {
      // stdout keeps the chunk until it is written: hand it a copy, keep the buffer
      const chunk = this.copyOut(this.bytes.view());
      this.bytes.clear();
      if (!process.stdout.write(chunk, () => this.reuse(chunk)) && !this.drained) {
        this.drained = new Promise((resolve) =>
          process.stdout.once('drain', () => {
            this.drained = undefined;
            resolve();
          }),
        );
      }
      return this.drained;
    }
    this.writeAll(this.bytes.view());
    this.bytes.clear();
    return undefined;
  }

  /**
   * Chunks stdout is done with, for the next copies: a new 128 KiB buffer per
   * flush is a fresh allocation of pages each time (a page fault per 4 KiB of
   * output, a sixth of `script`'s time on a 200 MB output).
   */
  private readonly spare: Buffer[] = [];

  private copyOut(v: Uint8Array): Buffer {
    let buf = this.spare.pop();
    if (buf === undefined || buf.length < v.length) buf = Buffer.allocUnsafeSlow(Math.max(v.length, CHUNK * 2));
    buf.set(v);
    return buf.subarray(0, v.length);
  }

  private reuse(chunk: Buffer): void {
    if (this.spare.length < 4) this.spare.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.buffer.byteLength));
  }

  private writeAll(b: Uint8Array): void {
    let off = 0;
    while (off < b.length) {
      try {
        off += writeSync(this.fd, b, off, b.length - off);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') process.exit(process.exitCode ?? 0);
        // stdout is a non-blocking pipe and full: wait a little for the reader
        if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        else throw e;
      }
    }
  }

  /** Flush (and wait for stdout to take it all); a file output is renamed into place. */
  async close(): Promise<void> {
    await this.flush();
    if (this.tmp === undefined) return;
    closeSync(this.fd);
    renameSync(this.tmp, this.path!);
  }

  /** After a failure: a file output is removed, nothing half-written stays. */
  async abort(): Promise<void> {
    if (this.tmp === undefined) return this.flush();
    closeSync(this.fd);
    unlinkSync(this.tmp);
  }
}

/** Run `work` with a sink on `path` (stdout by default): closed on success, aborted on failure. */
export async function withOutput<T>(path: string | undefined, work: (out: OutputSink) => Promise<T> | T): Promise<T> {
  const out = new OutputSink(path);
  try {
    const r = await work(out);
    await out.close();
    return r;
  } catch (e) {
    await out.abort();
    throw e;
  }
}
