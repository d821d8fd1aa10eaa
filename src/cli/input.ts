/**
 * `-i, --input`: the recording a command reads, taken as perf takes it — a
 * perf.data file, a `perf record --kcore` directory (DIR/data + DIR/kcore_dir),
 * '-' for a pipe on stdin, and with no `-i`: stdin when it is a pipe, else
 * ./perf.data (file or directory), like perf's commands.
 */
import { fstatSync } from 'node:fs';
import type { Command } from 'commander';

/** The help text's tail every `-i` shares. */
export const INPUT_DEFAULT_HELP = 'default: stdin when it is a pipe, else ./perf.data (file or --kcore directory)';

/** perf's rule for a missing -i (cmd-script.c, cmd-report.c): a FIFO on stdin means pipe mode. */
export function defaultInput(): string {
  try {
    if (fstatSync(0).isFIFO()) return '-';
  } catch {
    // no stdin at all
  }
  return 'perf.data';
}

/**
 * A `preAction` hook: fills in `-i` when the user gave none, unless the
 * command reads something else this time (`decode --raw-pt`).
 */
export function fillDefaultInput(cmd: Command): void {
  const o = cmd.opts();
  if (o.input === undefined && o.rawPt === undefined) cmd.setOptionValue('input', defaultInput());
}
