/** The lines `perfpoke record` prints on stderr when it is done, in perf record's words. */
import type { RecordResult } from '../record/session.js';

export function recordSummaryLines(r: RecordResult): string[] {
  const lines = r.warnings.map((w) => `perfpoke record: warning: ${w}`);
  if (r.commandExit !== undefined && r.commandExit !== 0)
    lines.push(`perfpoke record: the command exited with ${r.commandExit}`);
  lines.push(`[ perfpoke record: Woken up ${r.wakeups} times to write data ]`);
  const where = r.output === '-' ? 'to stdout' : r.output;
  lines.push(
    `[ perfpoke record: Captured and wrote ${(r.fileBytes / 1048576).toFixed(3)} MB ${where} ` +
      `(${r.records} records, ${r.lost} lost) ]`,
  );
  return lines;
}
