import { isFormatError } from '../io/errors.js';
import { describeFsError, InputPathError } from '../perfdata/input-path.js';

/** Exit codes scripts can rely on. */
export const EXIT_OK = 0;
export const EXIT_NO = 1; // a verdict of "no": inconsistent, mismatching
export const EXIT_BAD_INPUT = 2;
export const EXIT_INTERNAL = 3;

/** A user-facing error with a chosen exit code (bad flag values, missing files…). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_BAD_INPUT,
  ) {
    super(message);
  }
}

/** Print one clear line for a failure and return the exit code to use. */
export function reportError(e: unknown): number {
  if (isFormatError(e)) {
    process.stderr.write(`perfpoke: ${e.message}\n`);
    return EXIT_BAD_INPUT;
  }
  if (e instanceof InputPathError) {
    process.stderr.write(`perfpoke: ${e.message}\n`);
    return EXIT_BAD_INPUT;
  }
  if (e instanceof UsageError) {
    process.stderr.write(`perfpoke: ${e.message}\n`);
    return e.exitCode;
  }
  const err = e as NodeJS.ErrnoException;
  if (err && typeof err.code === 'string' && typeof err.path === 'string') {
    process.stderr.write(`perfpoke: ${describeFsError(err.path, err)?.message ?? `${err.path}: ${err.message}`}\n`);
    return EXIT_BAD_INPUT;
  }
  // one line for users; the stack only when asked for (a bug report)
  const detail = process.env.PERFPOKE_DEBUG ? (err?.stack ?? String(e)) : (err?.message ?? String(e)).split('\n')[0];
  const hint = process.env.PERFPOKE_DEBUG ? '' : ' (a perfpoke bug: PERFPOKE_DEBUG=1 shows where)';
  process.stderr.write(`perfpoke: internal error: ${detail}${hint}\n`);
  return EXIT_INTERNAL;
}
