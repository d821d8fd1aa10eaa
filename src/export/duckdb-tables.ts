/**
 * Rows into DuckDB (embedded, in memory) and out as Parquet: one DuckDB
 * table per schema table, filled with an appender, copied per recording to
 * `<table>/recording=NAME/part-0.parquet` without the partition column (the
 * path holds it; see schema.ts).
 */
import { DuckDBInstance, LIST, listValue, UBIGINT, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TABLES, type CellValue, type Column, type RecordingTables, type TableName } from './schema.js';

export async function openDuckDb(): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  return instance.connect();
}

/** A SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

const quoteId = (s: string): string => `"${s.replace(/"/g, '""')}"`;

export function createTableSql(sqlName: string, table: TableName): string {
  const cols = [`recording VARCHAR`, ...TABLES[table].map((c) => `${quoteId(c.name)} ${c.type}`)];
  return `CREATE TABLE ${quoteId(sqlName)} (${cols.join(', ')})`;
}

type Appender = Awaited<ReturnType<DuckDBConnection['createAppender']>>;

function appendCell(a: Appender, col: Column, v: CellValue | undefined): void {
  if (v === null || v === undefined) a.appendNull();
  else if (col.type === 'VARCHAR') a.appendVarchar(String(v));
  else if (col.type === 'INTEGER') a.appendInteger(Number(v));
  else if (col.type === 'BIGINT') a.appendBigInt(BigInt(v as number | bigint));
  else if (col.type === 'UBIGINT') a.appendUBigInt(BigInt(v as number | bigint));
  else if (col.type === 'BOOLEAN') a.appendBoolean(Boolean(v));
  else if (col.type === 'VARCHAR[]') a.appendList(listValue((v as string[]).map(String)), LIST(VARCHAR));
  else a.appendList(listValue((v as bigint[]).map((x) => BigInt(x))), LIST(UBIGINT));
}

/** Append a recording's rows to tables named `${prefix}${table}` (created by the caller). */
export async function appendRecording(conn: DuckDBConnection, rec: RecordingTables, prefix = ''): Promise<void> {
  for (const table of Object.keys(TABLES) as TableName[]) {
    const rows = rec.rows[table];
    if (rows.length === 0) continue;
    const a = await conn.createAppender(`${prefix}${table}`);
    const cols = TABLES[table];
    for (const row of rows) {
      a.appendVarchar(rec.name);
      for (const col of cols) appendCell(a, col, row[col.name]);
      a.endRow();
    }
    a.closeSync();
  }
}

/**
 * Write one recording's tables as Parquet under `root` (every table, empty
 * ones too, so a glob over the folder always finds each table's schema).
 * `tables`: which tables to write. Returns the files written.
 */
export async function writeParquet(rec: RecordingTables, root: string, tables: TableName[]): Promise<string[]> {
  const conn = await openDuckDb();
  const files: string[] = [];
  try {
    for (const t of tables) await conn.run(createTableSql(t, t));
    await appendRecording(conn, rec);
    for (const t of tables) {
      const file = join(root, partitionPath(t, rec.name), 'part-0.parquet');
      mkdirSync(dirname(file), { recursive: true });
      await conn.run(
        `COPY (SELECT * EXCLUDE (recording) FROM ${quoteId(t)}) TO ${sqlString(file)} ` +
          '(FORMAT parquet, COMPRESSION zstd)',
      );
      files.push(file);
    }
  } finally {
    conn.closeSync();
  }
  return files;
}

/** `<table>/recording=NAME`: the Hive-style partition folder. */
export function partitionPath(table: TableName, name: string): string {
  return join(table, `recording=${name}`);
}
