/**
 * `perfpoke record`: live recording with perf record's flags — system wide
 * (-a), attached to tasks (-p/-t) or following a workload. Everything heavy
 * is in src/record; the native addon loads only here, and only when the
 * command runs. perf record options perfpoke does not have are registered
 * hidden, so they fail with a line naming them instead of "unknown option".
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

function idList(flag: string) {
  return (v: string, prev: number[] = []): number[] => {
    const ids = v.split(',').filter((s) => s !== '');
    if (ids.length === 0 || ids.some((s) => !/^\d+$/.test(s) || Number(s) <= 0))
      throw new UsageError(`${flag} ${v}: expected a comma-separated list of ids`);
    return [...prev, ...ids.map(Number)];
  };
}

/**
 * perf record 6.1 options perfpoke record does not implement (docs/record.md
 * lists them): [flags as commander spells them, attribute name].
 */
const UNSUPPORTED: [string, string][] = [
  ['-g', 'g'],
  ['--call-graph <mode>', 'callGraph'],
  ['-c, --count <n>', 'count'],
  ['-C, --cpu <cpus>', 'cpu'],
  ['--per-thread', 'perThread'],
  ['-i, --no-inherit', 'inherit'],
  ['-s, --stat', 'stat'],
  ['-d, --data', 'data'],
  ['-T, --timestamp', 'timestamp'],
  ['-P, --period', 'period'],
  ['-n, --no-samples', 'samples'],
  ['-R, --raw-samples', 'rawSamples'],
  ['-b, --branch-any', 'branchAny'],
  ['-j, --branch-filter <filter>', 'branchFilter'],
  ['-W, --weight', 'weight'],
  ['--transaction', 'transaction'],
  ['-I, --intr-regs [regs]', 'intrRegs'],
  ['--user-regs [regs]', 'userRegs'],
  ['-S, --snapshot [opts]', 'snapshot'],
  ['--aux-sample [opts]', 'auxSample'],
  ['-z, --compression-level [n]', 'compressionLevel'],
  ['-k, --clockid <id>', 'clockid'],
  ['-u, --uid <user>', 'uid'],
  ['-G, --cgroup <name>', 'cgroup'],
  ['-D, --delay <ms>', 'delay'],
  ['--switch-output [when]', 'switchOutput'],
  ['--overwrite', 'overwrite'],
  ['--filter <filter>', 'filter'],
  ['-N, --no-buildid-cache', 'buildidCache'],
  ['-B, --no-buildid', 'buildid'],
  ['--buildid-all', 'buildidAll'],
  ['-r, --realtime <prio>', 'realtime'],
  ['--mmap-flush <bytes>', 'mmapFlush'],
  ['--affinity <mode>', 'affinity'],
  ['--max-size <size>', 'maxSize'],
  ['--no-bpf-event', 'bpfEvent'],
  ['--namespaces', 'namespaces'],
  ['--all-cgroups', 'allCgroups'],
  ['--tail-synthesize', 'tailSynthesize'],
  ['--timestamp-filename', 'timestampFilename'],
  ['--sample-cpu', 'sampleCpu'],
  ['--phys-data', 'physData'],
  ['--strict-freq', 'strictFreq'],
  ['--threads [spec]', 'threads'],
  ['--control <fds>', 'control'],
];

/** The option the user gave, as spelled in UNSUPPORTED (negated ones are set to false by commander). */
function unsupportedGiven(opts: Record<string, unknown>): string | undefined {
  for (const [flags, key] of UNSUPPORTED) {
    const negated = /--no-/.test(flags);
    const v = opts[key];
    if (negated ? v === false : v !== undefined) return flags.replace(/ [<[].*$/, '');
  }
  return undefined;
}

export function register(program: Command): void {
  const cmd = program.command('record');
  for (const [flags] of UNSUPPORTED) cmd.addOption(new Option(flags).hideHelp());
  cmd
    .description(
      'record side-band events (KSYMBOL, BPF_EVENT, TEXT_POKE, MMAP, COMM, switches) and samples into a ' +
        'perf.data file: system wide (-a), of existing tasks (-p/-t), or of a command and its children',
    )
    .usage('[-a | -p PID | -t TID] [-o FILE] [-e EVENT…] [-F FREQ] [--kcore] [-m PAGES] [-- command args…]')
    .option('-a, --all-cpus', 'system-wide collection from all online CPUs')
    .addOption(
      new Option('-p, --pid <pids>', 'record existing processes (comma-separated), all their threads')
        .argParser(idList('-p'))
        .conflicts('allCpus'),
    )
    .addOption(
      new Option('-t, --tid <tids>', 'record existing threads (comma-separated)')
        .argParser(idList('-t'))
        .conflicts('allCpus'),
    )
    .option('-o, --output <file>', 'output file (a directory with --kcore; - = pipe mode on stdout)', 'perf.data')
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
        const bad = unsupportedGiven(opts as Record<string, unknown>);
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
          for (const w of r.warnings) process.stderr.write(`perfpoke record: warning: ${w}\n`);
          if (r.commandExit !== undefined && r.commandExit !== 0)
            process.stderr.write(`perfpoke record: the command exited with ${r.commandExit}\n`);
          process.stderr.write(`[ perfpoke record: Woken up ${r.wakeups} times to write data ]\n`);
          const where = r.output === '-' ? 'to stdout' : r.output;
          process.stderr.write(
            `[ perfpoke record: Captured and wrote ${(r.fileBytes / 1048576).toFixed(3)} MB ${where} ` +
              `(${r.records} records, ${r.lost} lost) ]\n`,
          );
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
