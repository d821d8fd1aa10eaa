/**
 * Where a recording's perf.data is, given what a user passes to `-i`: a file,
 * or a `perf record --kcore` directory (DIR/data beside DIR/kcore_dir), as
 * perf accepts both. '-' (stdin) is left to the caller.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';

/** An input that cannot be a recording: one line naming the path and the problem (CLI exit 2). */
export class InputPathError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.path = path;
  }
}

/** Node's error codes in the words a user reads. */
const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a path component is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EISDIR: 'is a directory',
};

/** The user-facing words for a failed file system call on `path`. */
export function describeFsError(path: string, e: unknown): InputPathError | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  return new InputPathError(path, ERRNO_WORDS[code] ?? `cannot be read (${code})`);
}

/**
 * The perf.data file to read for `input`: the file itself, or DIR/data for a
 * directory. Throws InputPathError for a missing path, a directory without
 * `data`, or something that is neither a file nor a directory.
 */
export function perfDataPath(input: string): string {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(input);
  } catch (e) {
    throw describeFsError(input, e) ?? e;
  }
  if (st.isDirectory()) {
    const data = join(input, 'data');
    let ds: ReturnType<typeof statSync>;
    try {
      ds = statSync(data);
    } catch {
      throw new InputPathError(input, 'a directory without data (expected a `perf record --kcore` directory)');
    }
    if (!ds.isFile()) throw new InputPathError(data, 'not a regular file');
    return data;
  }
  if (!st.isFile() && !st.isFIFO() && !st.isCharacterDevice())
    throw new InputPathError(input, 'not a regular file or directory');
  return input;
}
