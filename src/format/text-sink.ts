/**
 * Where formatted text goes. A formatter writes strings; the caller decides
 * whether they land on stdout, in a file (src/cli/output.ts) or in memory.
 */
export interface TextSink {
  write(s: string): void;
  /** Characters written but not yet handed on (callers flush past a threshold). */
  readonly pending: number;
  flush(): void | Promise<void>;
}

/** Collects the output in memory (tests, benches, library users). */
export class StringSink implements TextSink {
  private parts: string[] = [];
  write = (s: string): void => {
    this.parts.push(s);
  };
  readonly pending = 0;
  flush(): void {}
  get text(): string {
    return this.parts.join('');
  }
}
