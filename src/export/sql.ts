/**
 * `perfpoke sql` as a library call: DuckDB (embedded, in memory) with one
 * view per table (recordings, records, samples, pokes, sites, errors,
 * branches) over every input: recordings are read into in-memory tables,
 * exports are read where they lie with read_parquet(hive_partitioning) —
 * the same files and the same reading a data-lake engine would do.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collectTables, type CollectOptions } from './collect.js';
import { appendRecording, createTableSql, openDuckDb, sqlString } from './duckdb-tables.js';
import type { SqlInput } from './inputs.js';
import { TABLE_NAMES, TABLES, type TableName } from './schema.js';

export interface SqlResult {
  columns: string[];
  /** JSON-ready values (DuckDB's getRowsJson: 64-bit integers as decimal strings, lists as arrays). */
  rows: unknown[][];
}

const LIVE = 'live_';

/** The Parquet partitions of one table in an export folder, as a glob (undefined when there are none). */
function parquetGlob(dir: string, t: TableName): string | undefined {
  const base = join(dir, t);
  if (!existsSync(base)) return undefined;
  const any = readdirSync(base).some((n) => n.startsWith('recording=') && existsSync(join(base, n, 'part-0.parquet')));
  return any ? join(base, '*', '*.parquet') : undefined;
}

/** Read a set of Parquet globs with the partition column typed VARCHAR whatever the names look like. */
export function readParquetSql(globs: string[]): string {
  return (
    `read_parquet([${globs.map(sqlString).join(', ')}], hive_partitioning = true, ` +
    `hive_types = {'recording': VARCHAR}, union_by_name = true)`
  );
}

/** A connection whose views cover all inputs; the caller closes it. */
export async function openSqlSession(inputs: SqlInput[], opts: CollectOptions = {}): Promise<DuckDBConnection> {
  const conn = await openDuckDb();
  try {
    for (const t of TABLE_NAMES) await conn.run(createTableSql(LIVE + t, t));
    for (const i of inputs) {
      if (i.kind !== 'recording') continue;
      await appendRecording(conn, await collectTables(i.path, { branches: opts.branches }), LIVE);
    }
    const exports = inputs.filter((i) => i.kind === 'export').map((i) => i.path);
    for (const t of TABLE_NAMES) {
      const cols = ['recording', ...TABLES[t].map((c) => `"${c.name}"`)].join(', ');
      const globs = exports.map((d) => parquetGlob(d, t)).filter((g): g is string => g !== undefined);
      const lake = globs.length ? ` UNION ALL SELECT ${cols} FROM ${readParquetSql(globs)}` : '';
      await conn.run(`CREATE VIEW ${t} AS SELECT ${cols} FROM ${LIVE}${t}${lake}`);
    }
  } catch (e) {
    conn.closeSync();
    throw e;
  }
  return conn;
}

export async function runSql(conn: DuckDBConnection, query: string): Promise<SqlResult> {
  const r = await conn.runAndReadAll(query);
  return { columns: r.columnNames(), rows: r.getRowsJson() as unknown[][] };
}

/** One cell as text: NULL for null, lists as [a, b]. */
function cellText(v: unknown, nullText: string): string {
  if (v === null || v === undefined) return nullText;
  if (Array.isArray(v)) return `[${v.map((x) => cellText(x, 'NULL')).join(', ')}]`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

const NUMERIC = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** An aligned text table: numbers right-aligned, a dashed rule under the header, a row count after. */
export function formatTable(r: SqlResult): string {
  const cells = r.rows.map((row) => row.map((v) => cellText(v, 'NULL')));
  const width = r.columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const right = r.columns.map(
    (_, i) => cells.length > 0 && cells.every((row) => NUMERIC.test(row[i]!) || row[i] === 'NULL'),
  );
  const line = (row: string[]): string =>
    row
      .map((s, i) => (right[i] ? s.padStart(width[i]!) : s.padEnd(width[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(r.columns), width.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  out.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return `${out.join('\n')}\n`;
}

function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV (RFC 4180 quoting, \n line ends, as DuckDB writes it) with a header line; null is the empty field. */
export function formatCsv(r: SqlResult): string {
  const lines = [r.columns.map(csvField).join(',')];
  for (const row of r.rows) lines.push(row.map((v) => csvField(cellText(v, ''))).join(','));
  return `${lines.join('\n')}\n`;
}

/** One JSON object per row, keys = the query's column names (the query decides the shape: no `type`). */
export function formatJsonLines(r: SqlResult): string {
  let s = '';
  for (const row of r.rows) s += `${JSON.stringify(Object.fromEntries(r.columns.map((c, i) => [c, row[i]])))}\n`;
  return s;
}
