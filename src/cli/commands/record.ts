/**
 * `perfpoke record`: system-wide live recording, perf record's flags.
 * Everything heavy is in src/record; the native addon loads only here, and
 * only when the command runs.
 */
import type { Command } from 'commander';
import { Option } from 'commander';

import { UsageError } from '../errors.js';

function positiveInt(flag: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) <= 0) throw new UsageError(`${flag} ${v}: expected a positive integer`);
    return Number(v);
  };
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, ...v.split(',').filter((s) => s !== '')];
}

export function register(program: Command): void {
  program
    .command('record')
    .description(
      'record side-band events (KSYMBOL, BPF_EVENT, TEXT_POKE, MMAP, COMM, switches) system wide into a perf.data file',
    )
    .usage('-a -o FILE [-e EVENT…] [-F FREQ] [--kcore] [-m PAGES] [-- command args…]')
    .option('-a, --all-cpus', 'system-wide collection from all online CPUs')
    .option('-o, --output <file>', 'output file (a directory with --kcore)', 'perf.data')
    .option(
      '-e, --event <event>',
      'extra sampling event(s): cpu-clock, task-clock, cycles… (repeat or comma-separate)',
      collect,
      [] as string[],
    )
    .addOption(
      new Option('-F, --freq <hz>', 'sampling frequency for -e events').argParser(positiveInt('-F')).default(4000),
    )
    .option('--kcore', 'copy kernel text (kcore, kallsyms, modules) into OUTPUT/kcore_dir; OUTPUT becomes a directory')
    .option('--no-switch-events', 'do not record context switches')
    .addOption(
      new Option('-m, --mmap-pages <pages>', 'ring buffer data pages per CPU (power of two)')
        .argParser(positiveInt('-m'))
        .default(128),
    )
    .option('--json', 'print the summary as JSON on stdout')
    .argument('[command...]', 'workload: record for its lifetime')
    .action(
      async (
        command: string[],
        opts: {
          allCpus?: boolean;
          output: string;
          event: string[];
          freq: number;
          kcore?: boolean;
          switchEvents: boolean;
          mmapPages: number;
          json?: boolean;
        },
      ) => {
        if (!opts.allCpus && command.length === 0) {
          throw new UsageError('record: give -a (system wide) and/or a command to run; see perfpoke record --help');
        }
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
            events: opts.event,
            freq: opts.freq,
            switchEvents: opts.switchEvents,
            pages: opts.mmapPages,
            kcore: opts.kcore ?? false,
            signal: abort.signal,
            cmdline: ['perfpoke', ...process.argv.slice(process.argv.indexOf('record'))],
          });
          for (const w of r.warnings) process.stderr.write(`perfpoke record: warning: ${w}\n`);
          if (r.commandExit !== undefined && r.commandExit !== 0)
            process.stderr.write(`perfpoke record: the command exited with ${r.commandExit}\n`);
          process.stderr.write(`[ perfpoke record: Woken up ${r.wakeups} times to write data ]\n`);
          const mb = (r.fileBytes / 1048576).toFixed(3);
          process.stderr.write(
            `[ perfpoke record: Captured and wrote ${mb} MB ${r.output} (${r.records} records, ${r.lost} lost) ]\n`,
          );
          if (opts.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
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
