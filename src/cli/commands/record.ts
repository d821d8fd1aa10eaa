/**
 * `perfpoke record`: live recording with perf record's flags — system wide
 * (-a), attached to tasks (-p/-t) or following a workload. Everything heavy
 * is in src/record; the native addon loads only here, and only when the
 * command runs. perf record options perfpoke does not have are registered
 * hidden, so they fail with a line naming them instead of "unknown option".
 */
import type { Command } from 'commander';
import { Option } from 'commander';

import { recordSummaryLines } from '../../format/record-summary.js';
import { UNSUPPORTED_RECORD_OPTIONS, unsupportedRecordOption } from '../../record/unsupported-options.js';
import { UsageError } from '../errors.js';
import { idListArg, listArg, positiveIntArg } from '../options.js';

export function register(program: Command): void {
  const cmd = program.command('record');
  for (const [flags] of UNSUPPORTED_RECORD_OPTIONS) cmd.addOption(new Option(flags).hideHelp());
  cmd
    .description(
      'record side-band events (KSYMBOL, BPF_EVENT, TEXT_POKE, MMAP, COMM, switches) and samples into a ' +
        'perf.data file: system wide (-a), of existing tasks (-p/-t), or of a command and its children',
    )
    .usage('[-a | -p PID | -t TID] [-o FILE] [-e EVENT…] [-F FREQ] [--kcore] [-m PAGES] [-- command args…]')
    .option('-a, --all-cpus', 'system-wide collection from all online CPUs')
    .addOption(
      new Option('-p, --pid <pids>', 'record existing processes (comma-separated), all their threads')
        .argParser(idListArg('-p'))
        .conflicts('allCpus'),
    )
    .addOption(
      new Option('-t, --tid <tids>', 'record existing threads (comma-separated)')
        .argParser(idListArg('-t'))
        .conflicts('allCpus'),
    )
    .option('-o, --output <file>', 'output file (a directory with --kcore; - = pipe mode on stdout)', 'perf.data')
    .option(
      '-e, --event <event>',
      'extra sampling event(s): cpu-clock, task-clock, cycles… (repeat or comma-separate)',
      listArg,
      [] as string[],
    )
    .addOption(
      new Option('-F, --freq <hz>', 'sampling frequency for -e events').argParser(positiveIntArg('-F')).default(4000),
    )
    .option('--kcore', 'copy kernel text (kcore, kallsyms, modules) into OUTPUT/kcore_dir; OUTPUT becomes a directory')
    .option('--no-switch-events', 'do not record context switches')
    .addOption(
      new Option('-m, --mmap-pages <pages>', 'ring buffer data pages per CPU (power of two)')
        .argParser(positiveIntArg('-m'))
        .default(128),
    )
    .option('--json', 'print the summary as JSON on stdout')
    .argument('[command...]', 'workload: record it and its children; with -a/-p/-t it only sets how long to record')
    .addHelpText('after', '\nOther perf record options (-g, -c, -C, …) are refused by name; see docs/record.md.')
    .action(
      async (
        command: string[],
        opts: {
          allCpus?: boolean;
          pid?: number[];
          tid?: number[];
          output: string;
          event: string[];
          freq: number;
          kcore?: boolean;
          switchEvents: boolean;
          mmapPages: number;
          json?: boolean;
        },
      ) => {
        const bad = unsupportedRecordOption(opts as Record<string, unknown>);
        if (bad) throw new UsageError(`record: ${bad}: this perf record option is not supported by perfpoke record`);
        if (!opts.allCpus && !opts.pid && !opts.tid && command.length === 0) {
          throw new UsageError(
            'record: give -a (system wide), -p PID, -t TID or a command; see perfpoke record --help',
          );
        }
        if (opts.output === '-' && opts.json) throw new UsageError('record: --json and -o - both want stdout');
        if (opts.output === '-' && opts.kcore) throw new UsageError('record: --kcore writes a directory, not -o -');
        if ((opts.mmapPages & (opts.mmapPages - 1)) !== 0)
          throw new UsageError(`-m ${opts.mmapPages}: expected a power of two`);
        const { record } = await import('../../record/session.js');
        const abort = new AbortController();
        const onSig = (): void => abort.abort();
        process.on('SIGINT', onSig);
        process.on('SIGTERM', onSig);
        try {
          const r = await record({
            output: opts.output,
            command,
            systemWide: opts.allCpus ?? false,
            pids: opts.pid,
            tids: opts.tid,
            events: opts.event,
            freq: opts.freq,
            switchEvents: opts.switchEvents,
            pages: opts.mmapPages,
            kcore: opts.kcore ?? false,
            signal: abort.signal,
            cmdline: ['perfpoke', ...process.argv.slice(process.argv.indexOf('record'))],
          });
          for (const line of recordSummaryLines(r)) process.stderr.write(`${line}\n`);
          if (opts.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
          // like perf record: the workload's exit status becomes ours
          if (typeof r.commandExit === 'number' && r.commandExit !== 0) process.exitCode = r.commandExit;
        } catch (e) {
          const code = (e as { exitCode?: unknown }).exitCode;
          if (typeof code === 'number' && !(e instanceof UsageError)) throw new UsageError((e as Error).message, code);
          throw e;
        } finally {
          process.off('SIGINT', onSig);
          process.off('SIGTERM', onSig);
        }
      },
    );
}
