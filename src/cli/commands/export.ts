/**
 * perfpoke export -i REC… -o DIR [--format parquet|jsonl] [--branches] [--name NAME]
 *
 * Write a recording's tables (docs/tables.md) as a data-lake folder:
 * DIR/<table>/recording=NAME/part-0.parquet (or .jsonl). Exporting several
 * recordings into the same DIR gives the folder `perfpoke sql`, DuckDB,
 * Spark or Trino read as one set of tables.
 */
import type { Command } from 'commander';
import type { ExportFormat } from '../../export/export.js';
import { recordingName } from '../../export/collect.js';
import { UsageError } from '../errors.js';

interface ExportCliOptions {
  input: string[];
  output: string;
  format: string;
  branches?: boolean;
  name?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('export')
    .description('write the tables of a recording (docs/tables.md) as Parquet or JSON Lines, Hive-partitioned')
    .requiredOption('-i, --input <rec...>', 'recording(s): perf.data files or `perf record --kcore` directories')
    .requiredOption('-o, --output <dir>', 'export folder (created; other recordings in it are kept)')
    .option('--format <fmt>', 'parquet or jsonl', 'parquet')
    .option('--branches', 'intel_pt recordings: also write the branches table (one row per branch: large)')
    .option('--name <name>', 'the recording column value (one input only); default: the input base name')
    .option('--json', 'print what was written as JSON Lines')
    .addHelpText(
      'after',
      `
Layout: DIR/<table>/recording=NAME/part-0.parquet for the tables recordings,
records, samples, pokes, sites, errors (and branches with --branches).
The recording column is the partition: read with hive_partitioning.
Exit status: 0 written, 2 bad input (nothing is left half-written).
Example:
  perfpoke export -i perf.data.dir -o lake && perfpoke sql -i lake "SELECT count(*) FROM pokes"`,
    )
    .action(async (o: ExportCliOptions) => {
      if (o.format !== 'parquet' && o.format !== 'jsonl')
        throw new UsageError(`--format: expected parquet or jsonl, got '${o.format}'`);
      if (o.input.includes('-'))
        throw new UsageError('-i -: export reads its input several times; save the pipe to a file first');
      if (o.name !== undefined && o.input.length > 1)
        throw new UsageError('--name applies to one recording; give one -i or drop --name');
      const names = o.input.map((i) => o.name ?? recordingName(i));
      const dup = names.find((n, k) => names.indexOf(n) !== k);
      if (dup !== undefined)
        throw new UsageError(`two inputs would both be recording '${dup}': export them one at a time with --name`);
      for (const input of o.input) {
        const t0 = performance.now();
        // DuckDB (a native library) loads only when an export runs: --help stays fast
        const { exportRecording } = await import('../../export/export.js');
        const r = await exportRecording(input, o.output, {
          format: o.format as ExportFormat,
          branches: o.branches,
          name: o.name,
        });
        const secs = (performance.now() - t0) / 1000;
        if (o.json) {
          const line = { type: 'export', input, recording: r.name, rows: r.rows, files: r.files, seconds: secs };
          process.stdout.write(`${JSON.stringify(line)}\n`);
        } else {
          const counts = Object.entries(r.rows)
            .map(([t, n]) => `${n} ${t}`)
            .join(', ');
          process.stdout.write(`${input}: recording ${r.name} → ${o.output} (${counts}) in ${secs.toFixed(2)} s\n`);
        }
      }
    });
}
