/**
 * Where formatted text goes. A formatter writes strings, or appends straight
 * to `bytes` on hot paths and then calls `wrote()`; the caller decides
 * whether the text lands on stdout, in a file (src/cli/output.ts) or in memory.
 */
import { ByteText } from '../io/byte-text.js';

export interface TextSink {
  write(s: string): void;
  /** The buffer text is built in; after appending to it directly, call `wrote()`. */
  readonly bytes: ByteText;
  /** Bytes were appended to `bytes`: a synchronous sink hands them on past its threshold. */
  wrote(): void;
  /** Bytes written but not yet handed on (callers flush past a threshold). */
  readonly pending: number;
  flush(): void | Promise<void>;
}

/** Collects the output in memory (tests, benches, library users). */
export class StringSink implements TextSink {
  readonly bytes = new ByteText(1 << 12);
  write = (s: string): void => {
    this.bytes.str(s);
  };
  wrote(): void {}
  readonly pending = 0;
  flush(): void {}
  get text(): string {
    return this.bytes.toString();
  }
}
