/**
 * The tables `perfpoke export` writes and `perfpoke sql` queries: one list of
 * columns per table, in file order, with the DuckDB/Parquet type of each.
 * docs/tables.md is the same schema in prose; test/export.test.ts checks that
 * the Parquet files carry exactly these types, so a change here is a change
 * of the published format.
 *
 * Every table also has `recording` (VARCHAR): it is the Hive partition key
 * (`<table>/recording=NAME/part-0.parquet`), so it lives in the path, not in
 * the files (Spark refuses a column that is in both).
 */
export type ColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'UBIGINT' | 'BOOLEAN' | 'VARCHAR[]' | 'UBIGINT[]';

export interface Column {
  name: string;
  type: ColumnType;
  /** One line for docs/tables.md. */
  doc: string;
}

export type TableName = 'recordings' | 'records' | 'samples' | 'pokes' | 'sites' | 'errors' | 'branches';

const c = (name: string, type: ColumnType, doc: string): Column => ({ name, type, doc });

const TIME = c('time_ns', 'BIGINT', 'perf clock time in ns (the sample_id time); null when the record has none');

export const TABLES: Record<TableName, Column[]> = {
  recordings: [
    c('path', 'VARCHAR', 'the perf.data file read'),
    c('host', 'VARCHAR', 'HOSTNAME feature'),
    c('kernel', 'VARCHAR', 'OSRELEASE feature (uname -r)'),
    c('perf_version', 'VARCHAR', 'VERSION feature'),
    c('arch', 'VARCHAR', 'ARCH feature'),
    c('nr_cpus', 'INTEGER', 'NRCPUS feature, CPUs online'),
    c('cmdline', 'VARCHAR', 'CMDLINE feature, arguments joined by blanks'),
    c('events', 'VARCHAR[]', 'event names, in attr order'),
    c('kernel_build_id', 'VARCHAR', 'BUILD_ID feature entry of [kernel.kallsyms] (hex), null when absent'),
    c('first_time_ns', 'BIGINT', 'smallest record time'),
    c('last_time_ns', 'BIGINT', 'largest record time'),
    c('duration_ns', 'BIGINT', 'last_time_ns - first_time_ns'),
    c('records', 'BIGINT', 'rows of `records` (perf report --stats TOTAL)'),
    c('samples', 'BIGINT', 'rows of `samples`'),
    c('pokes', 'BIGINT', 'rows of `pokes`'),
    c('kcore_dir', 'BOOLEAN', 'whether the recording has a kcore_dir (pokes are checked against real text)'),
    c('intel_pt', 'BOOLEAN', 'whether it holds an intel_pt trace (then `errors` is filled)'),
    c('verdict', 'VARCHAR', "`perfpoke check`'s overall verdict"),
  ],
  records: [
    c('offset', 'BIGINT', 'file offset of the record (of the COMPRESSED record for records inside one)'),
    c('record_type', 'INTEGER', 'perf_event_header.type (named so: `type` is the JSON Lines row kind)'),
    c('type_name', 'VARCHAR', 'its name as perf prints it (MMAP2, TEXT_POKE, FINISHED_ROUND…)'),
    c('misc', 'INTEGER', 'perf_event_header.misc'),
    c('size', 'INTEGER', 'perf_event_header.size'),
    TIME,
    c('cpu', 'INTEGER', 'sample cpu or sample_id cpu; null when absent'),
  ],
  samples: [
    c('offset', 'BIGINT', 'file offset of the SAMPLE record'),
    TIME,
    c('cpu', 'INTEGER', 'PERF_SAMPLE_CPU'),
    c('pid', 'INTEGER', 'PERF_SAMPLE_TID pid'),
    c('tid', 'INTEGER', 'PERF_SAMPLE_TID tid'),
    c('comm', 'VARCHAR', "the thread's comm at that time (COMM records)"),
    c('ip', 'UBIGINT', 'PERF_SAMPLE_IP'),
    c('sym', 'VARCHAR', 'kernel symbol+0xoff (kcore_dir kallsyms / KSYMBOL); null for user space'),
    c('dso', 'VARCHAR', '[kernel.kallsyms], a KSYMBOL name, or the user mapping file name'),
    c('period', 'UBIGINT', 'PERF_SAMPLE_PERIOD (or the attr period)'),
    c('event', 'VARCHAR', 'event name'),
    c('callchain', 'UBIGINT[]', 'PERF_SAMPLE_CALLCHAIN addresses, context markers left out; null without one'),
  ],
  pokes: [
    c('offset', 'BIGINT', 'file offset of the TEXT_POKE record'),
    c('seq', 'INTEGER', 'position in apply order (time, then file order); null for pokes perf ignores'),
    TIME,
    c('cpu', 'INTEGER', 'sample_id cpu; -1 when absent'),
    c('addr', 'UBIGINT', 'first byte poked'),
    c('sym', 'VARCHAR', 'symbol+0xoff as perf prints it beside the poke'),
    c('ksym', 'VARCHAR', 'the KSYMBOL at addr when it differs from sym (trampolines, BPF); else null'),
    c('kind', 'VARCHAR', 'jump-label, static-call, ftrace, bpf-trampoline, trampoline-create, …'),
    c('old_len', 'INTEGER', 'old_len'),
    c('new_len', 'INTEGER', 'new_len'),
    c('old', 'VARCHAR', 'old bytes, hex without blanks'),
    c('new', 'VARCHAR', 'new bytes, hex without blanks'),
    c('before', 'VARCHAR', 'old bytes disassembled (AT&T)'),
    c('after', 'VARCHAR', 'new bytes disassembled (AT&T)'),
    c('site_start', 'UBIGINT', 'start of the site (maximal overlapping range) it belongs to; null if ignored'),
    c('verdict', 'VARCHAR', 'per-poke check verdict (see docs/tables.md)'),
  ],
  sites: [
    c('site_start', 'UBIGINT', 'first byte of the site'),
    c('site_end', 'UBIGINT', 'one past its last byte'),
    c('sym', 'VARCHAR', 'symbol+0xoff of site_start'),
    c('pokes', 'INTEGER', 'pokes at the site'),
    c('stale', 'INTEGER', 'of which disagree with the image (check)'),
    c('kinds', 'VARCHAR[]', 'distinct poke kinds at the site, sorted'),
    c('first_time_ns', 'BIGINT', 'time of its first poke'),
    c('last_time_ns', 'BIGINT', 'time of its last poke'),
    c('lost_after_ns', 'BIGINT', 'stale site: a change is missing after this time (null = start of recording)'),
    c('lost_before_ns', 'BIGINT', 'stale site: …and before this one; null when not stale'),
  ],
  errors: [
    c('cpu', 'INTEGER', 'CPU whose trace failed'),
    TIME,
    c('tsc', 'UBIGINT', 'last TSC seen before the error'),
    c('ip', 'UBIGINT', 'decoder ip at the error (0 when unknown)'),
    c('code', 'INTEGER', "perf's INTEL_PT_ERR code"),
    c('message', 'VARCHAR', "perf's message for the code"),
    c('reason', 'VARCHAR', 'what went wrong, in perf debug-log words'),
    c('trace_offset', 'BIGINT', "offset in the CPU's concatenated trace"),
  ],
  branches: [
    c('cpu', 'INTEGER', 'CPU'),
    TIME,
    c('from_ip', 'UBIGINT', 'branch source'),
    c('to_ip', 'UBIGINT', 'branch target (0: trace end)'),
    c('kind', 'VARCHAR', 'jcc, jmp, call, ret, ind, tr strt, tr end, async'),
  ],
};

export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/** A value of a row: what the columns' types take (lists for the `[]` types). */
export type CellValue = string | number | bigint | boolean | null | readonly (string | bigint)[];
export type Row = Record<string, CellValue>;

/** All rows of one recording, by table (tables that do not apply are empty). */
export interface RecordingTables {
  name: string;
  rows: Record<TableName, Row[]>;
}
