/**
 * An option a formatter cannot honour for this input, in perf's wording
 * (e.g. "Samples for 'cycles' event do not have CPU attribute set"). The CLI
 * reports it as bad usage (exit 2); a library user gets it as a plain Error.
 */
export class FormatOptionError extends Error {
  override readonly name = 'FormatOptionError';
}
