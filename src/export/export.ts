/**
 * `perfpoke export` as a library call: one recording's tables into a folder
 * laid out as a data lake (`DIR/<table>/recording=NAME/part-0.<ext>`).
 *
 * Nothing half-written: the files go to a temporary folder inside DIR first;
 * only when all are written is each partition folder renamed into place
 * (replacing that recording's previous export, leaving other recordings'
 * partitions alone).
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { collectTables, type CollectOptions } from './collect.js';
import { partitionPath, writeParquet } from './duckdb-tables.js';
import { writeJsonl } from './jsonl-tables.js';
import { TABLE_NAMES, type RecordingTables, type TableName } from './schema.js';

export type ExportFormat = 'parquet' | 'jsonl';

export interface ExportOptions extends CollectOptions {
  format?: ExportFormat;
}

export interface ExportResult {
  name: string;
  /** Rows per table written. */
  rows: Partial<Record<TableName, number>>;
  files: string[];
}

/** Tables every export has (`errors` is empty unless the recording holds an intel_pt trace). */
const ALWAYS: TableName[] = ['recordings', 'records', 'samples', 'pokes', 'sites', 'errors'];

export async function exportRecording(input: string, outDir: string, opts: ExportOptions = {}): Promise<ExportResult> {
  const rec = await collectTables(input, opts);
  return writeTables(rec, outDir, opts.format ?? 'parquet', opts.branches ? [...ALWAYS, 'branches'] : ALWAYS);
}

export async function writeTables(
  rec: RecordingTables,
  outDir: string,
  format: ExportFormat,
  tables: TableName[],
): Promise<ExportResult> {
  mkdirSync(outDir, { recursive: true });
  const tmp = mkdtempSync(join(outDir, '.perfpoke-export-'));
  try {
    const written = format === 'parquet' ? await writeParquet(rec, tmp, tables) : writeJsonl(rec, tmp, tables);
    for (const t of tables) {
      const part = partitionPath(t, rec.name);
      mkdirSync(join(outDir, t), { recursive: true });
      rmSync(join(outDir, part), { recursive: true, force: true });
      renameSync(join(tmp, part), join(outDir, part));
    }
    // a table this export leaves out (branches without --branches) must not keep an older export's rows
    for (const t of TABLE_NAMES)
      if (!tables.includes(t)) rmSync(join(outDir, partitionPath(t, rec.name)), { recursive: true, force: true });
    return {
      name: rec.name,
      rows: Object.fromEntries(tables.map((t) => [t, rec.rows[t].length])),
      files: written.map((f) => join(outDir, f.slice(tmp.length + 1))),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
