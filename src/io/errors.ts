/**
 * One error type for every malformed input, after libipt's pte_* and perf's
 * "at offset 0x…" diagnostics: it names the file, the offset, the structure
 * being read and what was expected, so a user can open a hex editor at it.
 */
export type FormatErrorKind =
  | 'truncated' // input ends inside a structure
  | 'bad-magic'
  | 'bad-size' // a size/length field is impossible (0, past the end, overflow)
  | 'bad-value' // a field holds a value the format forbids
  | 'unsupported'; // well-formed but not something we can read

export interface FormatErrorInfo {
  kind: FormatErrorKind;
  /** Absolute offset in the file (or stream) where the bad structure starts. */
  offset: number;
  /** Structure name, perf's spelling where one exists: "MMAP2 (10)", "perf_file_header". */
  structure: string;
  expected?: string;
  actual?: string | number | bigint;
  file?: string;
}

export class FormatError extends Error {
  readonly info: FormatErrorInfo;
  constructor(info: FormatErrorInfo) {
    super(formatMessage(info));
    this.name = 'FormatError';
    this.info = info;
  }
  get kind(): FormatErrorKind {
    return this.info.kind;
  }
  get offset(): number {
    return this.info.offset;
  }
  /** The same error, now naming the file it came from. */
  withFile(file: string): FormatError {
    if (this.info.file) return this;
    const e = new FormatError({ ...this.info, file });
    e.stack = this.stack;
    return e;
  }
}

function formatMessage(i: FormatErrorInfo): string {
  const where = `${i.file ? `${i.file}: ` : ''}at offset 0x${i.offset.toString(16)}: ${i.structure}`;
  const what =
    i.actual !== undefined
      ? `: ${describeKind(i.kind)} ${String(i.actual)}${i.expected ? `, expected ${i.expected}` : ''}`
      : `: ${describeKind(i.kind)}${i.expected ? `, expected ${i.expected}` : ''}`;
  return where + what;
}

function describeKind(k: FormatErrorKind): string {
  switch (k) {
    case 'truncated':
      return 'truncated';
    case 'bad-magic':
      return 'bad magic';
    case 'bad-size':
      return 'size';
    case 'bad-value':
      return 'value';
    case 'unsupported':
      return 'unsupported';
  }
}

export function isFormatError(e: unknown): e is FormatError {
  return e instanceof FormatError;
}
