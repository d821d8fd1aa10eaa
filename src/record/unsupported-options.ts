/**
 * perf record 6.1 options perfpoke record does not implement (docs/record.md
 * lists them). The CLI registers them hidden, so a user who gives one gets a
 * line naming it instead of "unknown option" or silently different output.
 */

/** [flags as commander spells them, attribute name commander gives the value]. */
export const UNSUPPORTED_RECORD_OPTIONS: readonly (readonly [string, string])[] = [
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

/** The unsupported option the user gave, as spelled in the list (negated ones are set to false by commander). */
export function unsupportedRecordOption(opts: Record<string, unknown>): string | undefined {
  for (const [flags, key] of UNSUPPORTED_RECORD_OPTIONS) {
    const negated = /--no-/.test(flags);
    const v = opts[key];
    if (negated ? v === false : v !== undefined) return flags.replace(/ [<[].*$/, '');
  }
  return undefined;
}
