/**
 * Rows into DuckDB (embedded, in memory) and out as Parquet: one DuckDB
 * table per schema table, filled with an appender, copied per recording to
 * `<table>/recording=NAME/part-0.parquet` without the partition column (the
 * path holds it; see schema.ts).
 */
import {
  BIGINT,
  BOOLEAN,
  DuckDBDataChunk,
  DuckDBInstance,
  INTEGER,
  LIST,
  listValue,
  UBIGINT,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TABLES, type CellValue, type ColumnType, type RecordingTables, type TableName } from './schema.js';

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

const DUCK_TYPES: Record<ColumnType, DuckDBType> = {
  VARCHAR,
  INTEGER,
  BIGINT,
  UBIGINT,
  BOOLEAN,
  'VARCHAR[]': LIST(VARCHAR),
  'UBIGINT[]': LIST(UBIGINT),
};

/** A cell as the data chunk takes it for the column's type. */
function duckValue(type: ColumnType, v: CellValue | undefined): DuckDBValue {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'VARCHAR':
      return String(v);
    case 'INTEGER':
      return Number(v);
    case 'BIGINT':
    case 'UBIGINT':
      return BigInt(v as number | bigint);
    case 'BOOLEAN':
      return Boolean(v);
    case 'VARCHAR[]':
      return listValue((v as string[]).map(String));
    case 'UBIGINT[]':
      return listValue((v as bigint[]).map((x) => BigInt(x)));
  }
}

/** Rows per data chunk: DuckDB's vector size. */
const CHUNK_ROWS = 2048;

/**
 * Append a recording's rows to tables named `${prefix}${table}` (created by
 * the caller), a data chunk at a time: one native call per 2048 rows rather
 * than one per cell (per-cell appends made exports ~5x slower).
 */
export async function appendRecording(conn: DuckDBConnection, rec: RecordingTables, prefix = ''): Promise<void> {
  for (const table of Object.keys(TABLES) as TableName[]) {
    const rows = rec.rows[table];
    if (rows.length === 0) continue;
    const cols = TABLES[table];
    const types = [VARCHAR, ...cols.map((c) => DUCK_TYPES[c.type])];
    const a = await conn.createAppender(`${prefix}${table}`);
    for (let from = 0; from < rows.length; from += CHUNK_ROWS) {
      const part = rows.slice(from, from + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(types, part.length);
      chunk.setColumns([part.map(() => rec.name), ...cols.map((c) => part.map((r) => duckValue(c.type, r[c.name])))]);
      a.appendDataChunk(chunk);
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
