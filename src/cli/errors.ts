import { isFormatError } from '../io/errors.js';

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
  if (e instanceof UsageError) {
    process.stderr.write(`perfpoke: ${e.message}\n`);
    return e.exitCode;
  }
  const err = e as NodeJS.ErrnoException;
  if (err && typeof err.code === 'string' && typeof err.path === 'string') {
    process.stderr.write(`perfpoke: ${err.path}: ${err.message}\n`);
    return EXIT_BAD_INPUT;
  }
  process.stderr.write(`perfpoke: internal error: ${err?.stack ?? String(e)}\n`);
  return EXIT_INTERNAL;
}
