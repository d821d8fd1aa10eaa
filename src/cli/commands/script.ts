import type { Command } from 'commander';
import { openSession } from '../../session/session.js';
import { FormatOptionError } from '../../format/errors.js';
import { isFormatError } from '../../io/errors.js';
import { ScriptPrinter } from '../../format/perf-script.js';
import { ScriptFilter } from '../../format/script-filters.js';
import { ScriptWarnings } from '../../format/script-warnings.js';
import { parseFields as parseFieldList, SCRIPT_FIELDS, type ScriptOptions } from '../../format/perf-script-fields.js';
import type { TextSink } from '../../format/text-sink.js';
import { ScriptTimes } from '../../format/script-time.js';
import { clockData, collect, kcoreSymbols, parseMaxStack, printUntilFull, timeShiftOptions } from '../script-setup.js';
import { UsageError } from '../errors.js';
import { jsonOption, quietOption } from '../options.js';
import { OutputSink } from '../output.js';
import { startProgress } from '../progress.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke script -i F [-F fields] [perf's filters] [--show-*-events] [--json]`: perf 6.1's `perf script`
 * lines with symbols, in perf's delivery order, taken in batches (the printer: src/format/perf-script.ts).
 */
export { StringSink } from '../../format/text-sink.js';
export type { ScriptOptions } from '../../format/perf-script-fields.js';

/** -F as the user typed it; a field perf would refuse is a usage error. */
export function parseFields(spec: string): ScriptOptions['fields'] {
  try {
    return parseFieldList(spec);
  } catch (e) {
    throw e instanceof FormatOptionError ? new UsageError(e.message) : e;
  }
}

/** The whole command, as a library call (tests and benches use it in-process). */
export async function runScript(
  input: string,
  opts: ScriptOptions & { quiet?: boolean },
  out: TextSink = new OutputSink(),
): Promise<void> {
  // perf -i accepts a `perf record --kcore` directory (data + kcore_dir)
  const dataFile = input === '-' ? input : (await import('../../machine/kcore-dir.js')).resolveInput(input).dataFile;
  if (opts.header || opts.headerOnly) {
    if (dataFile === '-') throw new UsageError('--header: not supported for pipe input yet');
    const { readFileFeatures } = await import('../../perfdata/features/index.js');
    const { headerLines } = await import('../../format/perf-header.js');
    const mtime = (await (await import('node:fs/promises')).stat(dataFile)).mtime;
    out.write(`${headerLines(await readFileFeatures(dataFile), mtime, false).join('\n')}\n`);
    if (opts.headerOnly) return void (await out.flush());
  }
  // a damaged feature table does not stop perf from printing the samples: reported after them.
  // The printer keeps no record past its batch: the session may hand its objects out again.
  const s = await openSession(dataFile, {
    ordered: !opts.showRoundEvents,
    perfTimes: true,
    damage: 'defer',
    reuseRecords: true,
  });
  const progress = startProgress('script', s.file.pipe ? 0 : s.file.header.data.offset + s.file.header.data.size, opts);
  try {
    const p = new ScriptPrinter(s, opts, out);
    p.filter = await ScriptFilter.create(opts, s.file);
    p.times = new ScriptTimes(opts, await clockData(s.file));
    p.tracingData = await (await import('../../perfdata/tracing/tracing-data.js')).readTracingData(s.file);
    const { DsoSymbols, recordedBuildIds } = await import('../../machine/dso-symbols.js');
    p.dsoSymbols = new DsoSymbols({ buildIds: await recordedBuildIds(s.file), kernel: await kcoreSymbols(input) });
    // loaded only when needed: the machine layer pulls in kcore and disassembly support
    if (opts.showTextPokeEvents && input !== '-')
      p.symbolizer = (await (await import('../../machine/from-perf-data.js')).loadMachine(input)).symbolizer;
    const warnings = new ScriptWarnings(s);
    for await (const batch of s.batches()) {
      for (let i = 0; i < batch.length; ) {
        try {
          i = printUntilFull(p, batch, i, warnings, out);
        } catch (e) {
          throw s.named(e);
        }
        if (out.pending > 1 << 16) await out.flush();
      }
      progress.update(batch[batch.length - 1]?.fileOffset ?? 0);
    }
    await out.flush();
    if (!opts.quiet) process.stderr.write(warnings.text(opts)); // perf's warnings (lost events, out of order)
    if (s.file.damage) throw s.file.damage;
  } catch (e) {
    // damaged input: perf has printed every record before the damage when it stops; so do we
    if (isFormatError(e)) await out.flush();
    throw e instanceof FormatOptionError ? new UsageError(e.message) : e;
  } finally {
    progress.stop();
    await s.close();
  }
}

/** What commander hands the action. */
export type ScriptCliOptions = { input: string; fields?: string[]; comms?: string; quiet?: boolean } & Omit<
  ScriptOptions,
  'fields'
>;

/** The parsed command line as runScript's options. */
export function toScriptOptions(o: ScriptCliOptions): Parameters<typeof runScript>[1] {
  const { fields, ...rest } = o;
  return { ...rest, comm: o.comms, fieldSpecs: fields };
}

export function register(program: Command): void {
  const cmd = program
    .command('script')
    .description('print samples (with symbols) and side-band records as `perf script` does, in time order')
    .option('-i, --input <path>', `perf.data file (file or pipe mode; - for stdin); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option(
      '-F, --fields <list>',
      `fields, perf's forms (a,b | +a,-b | sw:a,b; repeatable): ${SCRIPT_FIELDS.join(',')}`,
      collect,
    )
    .option('--show-task-events', 'print COMM, FORK and EXIT records')
    .option('--show-mmap-events', 'print MMAP and MMAP2 records')
    .option('--show-switch-events', 'print SWITCH and SWITCH_CPU_WIDE records')
    .option('--show-text-poke-events', 'print TEXT_POKE and KSYMBOL records')
    .option('--show-bpf-events', 'print KSYMBOL and BPF_EVENT records')
    .option('--show-namespace-events', 'print NAMESPACES records')
    .option('--show-cgroup-events', 'print CGROUP records')
    .option('--show-lost-events', 'print LOST records')
    .option('--show-round-events', 'print FINISHED_ROUND records (delivery in file order, as perf)')
    .option('--ns', 'times with 9 decimal places')
    .option('-G, --hide-call-graph', 'print the sample ip on its line instead of the callchain')
    .option('--max-stack <n>', 'print at most n callchain entries (default 127)', parseMaxStack)
    .option('-C, --cpu <list>', 'only samples and records of these CPUs (0-2,5)')
    .option('--pid <list>', 'only samples of these processes')
    .option('--tid <list>', 'only samples of these threads')
    .option('-c, --comms <list>', 'only samples of threads with these names')
    .option(
      '--time <ranges>',
      "only samples in these time ranges (perf's syntax: 'a,b c,d', '10%/2', '0%-10%,30%-40%')",
    )
    .option('--header', 'print the data header first (as perf report --header-only)')
    .option('--header-only', 'print only the data header');
  timeShiftOptions(cmd);
  jsonOption(cmd, 'one JSON object per line instead of text (types sample, event)');
  quietOption(cmd).action(async (o: ScriptCliOptions) => {
    const out = new OutputSink();
    await runScript(o.input, toScriptOptions(o), out);
    await out.close();
  });
}
