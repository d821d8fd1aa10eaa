/**
 * What `perfpoke script` reads and parses beside the printer's own options:
 * the kcore_dir's kernel symbols, the clock data for `tod`, and the option
 * parsers for --max-stack and the repeatable -F, and the per-record printing
 * loop (kept here so the command file stays a list of options).
 */
import type { Command } from 'commander';
import { Feature } from '../abi/feature.js';
import { readFileFeature } from '../perfdata/file-feature.js';
import type { PerfFile } from '../perfdata/perf-file.js';
import type { ClockData } from '../format/script-time.js';
import type { SymbolTable } from '../machine/symbols.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import type { ScriptPrinter } from '../format/perf-script.js';
import type { ScriptWarnings } from '../format/script-warnings.js';
import type { TextSink } from '../format/text-sink.js';
import { UsageError } from './errors.js';

export function parseMaxStack(v: string): number {
  if (!/^\d+$/.test(v)) throw new UsageError(`--max-stack: expected a number, got '${v}'`);
  return Number(v);
}

export const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

/** A `perf record --kcore` directory's kallsyms (perf reads the kernel's symbols there). */
export async function kcoreSymbols(input: string): Promise<SymbolTable | undefined> {
  if (input === '-') return undefined;
  const { resolveInput, loadKcoreDir } = await import('../machine/kcore-dir.js');
  const k = resolveInput(input).kcoreDir;
  return k ? loadKcoreDir(k).symbols : undefined;
}

/** HEADER_CLOCK_DATA (perf record -k/--clockid), which the `tod` field needs. */
export async function clockData(file: PerfFile): Promise<ClockData | undefined> {
  if (file.pipe) return undefined;
  const f = await readFileFeature(file, Feature.CLOCK_DATA);
  return f?.kind === 'clock_data' ? f : undefined;
}

/** --reltime and --deltatime, refused together as perf refuses them. */
export function timeShiftOptions(cmd: Command): Command {
  return cmd
    .option('--reltime', 'times relative to the first line printed')
    .option('--deltatime', 'times relative to the previous line printed')
    .hook('preAction', (c) => {
      const o = c.opts();
      if (o.reltime && o.deltatime)
        throw new UsageError(
          "reltime and deltatime - the two don't get along well. Please limit to --reltime or --deltatime.",
        );
    });
}

/**
 * Print batch[i…] until the output holds 64 KiB; the index of the next record.
 * Out of runScript's loop, which V8 does not optimise (see Session.route).
 */
export function printUntilFull(
  p: ScriptPrinter,
  batch: RawRecord[],
  i: number,
  w: ScriptWarnings,
  out: TextSink,
): number {
  while (i < batch.length) {
    const raw = batch[i++]!;
    w.count(raw);
    p.handle(raw);
    if (out.pending > 1 << 16) break;
  }
  return i;
}
