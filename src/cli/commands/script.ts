import type { Command } from 'commander';
import { openSession } from '../../session/session.js';
import { FormatOptionError } from '../../format/errors.js';
import { ScriptPrinter } from '../../format/perf-script.js';
import { parseFields as parseFieldList, SCRIPT_FIELDS, type ScriptOptions } from '../../format/perf-script-fields.js';
import type { TextSink } from '../../format/text-sink.js';
import { UsageError } from '../errors.js';
import { jsonOption, quietOption } from '../options.js';
import { OutputSink } from '../output.js';
import { startProgress } from '../progress.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke script -i F [-F fields] [--show-*-events] [--json]`: perf 6.1's
 * `perf script` lines for the symbol-free fields, in perf's delivery order
 * (the printer: src/format/perf-script.ts).
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
  const s = await openSession(dataFile, { ordered: !opts.showRoundEvents });
  const progress = startProgress('script', s.file.pipe ? 0 : s.file.header.data.offset + s.file.header.data.size, opts);
  try {
    const p = new ScriptPrinter(s, opts, out.write);
    // loaded only when needed: the machine layer pulls in kcore and disassembly support
    if (opts.showTextPokeEvents && input !== '-')
      p.symbolizer = (await (await import('../../machine/from-perf-data.js')).loadMachine(input)).symbolizer;
    let n = 0;
    for await (const raw of s.events()) {
      try {
        p.handle(raw);
      } catch (e) {
        throw s.named(e);
      }
      if (out.pending > 1 << 16) await out.flush();
      if ((++n & 0xffff) === 0) progress.update(raw.fileOffset);
    }
    await out.flush();
  } catch (e) {
    throw e instanceof FormatOptionError ? new UsageError(e.message) : e;
  } finally {
    progress.stop();
    await s.close();
  }
}

export function register(program: Command): void {
  const cmd = program
    .command('script')
    .description('print samples and side-band records as `perf script` does (symbol-free fields), in time order')
    .option('-i, --input <path>', `perf.data file (file or pipe mode; - for stdin); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option('-F, --fields <list>', `comma-separated fields: ${SCRIPT_FIELDS.join(',')}`)
    .option('--show-task-events', 'print COMM, FORK and EXIT records')
    .option('--show-mmap-events', 'print MMAP and MMAP2 records')
    .option('--show-switch-events', 'print SWITCH and SWITCH_CPU_WIDE records')
    .option('--show-text-poke-events', 'print TEXT_POKE and KSYMBOL records')
    .option('--show-bpf-events', 'print KSYMBOL and BPF_EVENT records')
    .option('--show-namespace-events', 'print NAMESPACES records')
    .option('--show-cgroup-events', 'print CGROUP records')
    .option('--show-lost-events', 'print LOST records')
    .option('--show-round-events', 'print FINISHED_ROUND records (delivery in file order, as perf)');
  jsonOption(cmd, 'one JSON object per line instead of text (types sample, event)');
  quietOption(cmd).action(async (o: { input: string; fields?: string } & Omit<ScriptOptions, 'fields'>) => {
    const out = new OutputSink();
    await runScript(o.input, { ...o, fields: o.fields !== undefined ? parseFields(o.fields) : undefined }, out);
    await out.close();
  });
}
