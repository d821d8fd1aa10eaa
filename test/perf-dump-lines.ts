/** Comparing `perf script -D` text with `perfpoke dump --hex`: the lines that come from the records alone. */

/** A record's summary line: "<cpu> <time> 0x<offset> [0x<size>]: PERF_RECORD_…". */
export const SUMMARY = /^(\S+ )*[0-9a-fx]+ \[0x[0-9a-f]+\]: PERF_RECORD_/;

/**
 * The lines perf -D prints from the record alone: hex dump, summaries,
 * dump_sample/user-record detail; not the symbol lines (" ... thread:",
 * " ...... dso:"), which need symbol resolution.
 */
export function recordLines(text: string): string[] {
  return text
    .split('\n')
    .filter(
      (l) =>
        SUMMARY.test(l) || /^ ?\.\.+ |^\.( |$)|^\S+@\S+ \[0x[0-9a-f]+\]: event:|^\.\.\.\.\. |^: unhandled!$/.test(l),
    )
    .filter((l) => !/^ \.\.\. thread:|^ \.\.\.\.\.\. dso:/.test(l));
}
