/**
 * The same tables as JSON Lines, in the same Hive layout
 * (`<table>/recording=NAME/part-0.jsonl`), following perfpoke's JSON
 * convention (src/format/json-lines.ts): each line starts with `type` (the
 * table's row kind), then `recording` and the columns in schema order;
 * addresses (UBIGINT) are "0x…" strings, times are `…time_ns` decimal
 * strings with perf's text beside them (`…time`), other integers are numbers.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { jsonHex, jsonLine, jsonTime } from '../format/json-lines.js';
import { partitionPath } from './duckdb-tables.js';
import { TABLES, type CellValue, type Column, type RecordingTables, type Row, type TableName } from './schema.js';

/** The `type` of each table's lines. */
export const ROW_TYPES: Record<TableName, string> = {
  recordings: 'recording',
  records: 'record',
  samples: 'sample',
  pokes: 'poke',
  sites: 'site',
  errors: 'trace_error',
  branches: 'branch',
};

/** Columns holding a point in time (they get perf's text beside them). */
export function isTimeColumn(c: Column): boolean {
  return c.type === 'BIGINT' && /(^|_)time_ns$|^lost_(after|before)_ns$/.test(c.name);
}

function jsonCell(col: Column, v: CellValue | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (col.type === 'UBIGINT') return jsonHex(BigInt(v as bigint));
  if (col.type === 'UBIGINT[]') return (v as bigint[]).map((x) => jsonHex(x));
  if (col.type === 'BIGINT') return isTimeColumn(col) ? String(v) : Number(v);
  return v;
}

export function jsonlLine(table: TableName, recording: string, row: Row): string {
  const o: { type: string } & Record<string, unknown> = { type: ROW_TYPES[table], recording };
  for (const col of TABLES[table]) {
    const v = row[col.name];
    if (isTimeColumn(col)) {
      const text = col.name.replace(/_ns$/, '');
      o[text] = v === null || v === undefined ? null : jsonTime(BigInt(v as bigint)).time;
    }
    o[col.name] = jsonCell(col, v);
  }
  return jsonLine(o);
}

export function writeJsonl(rec: RecordingTables, root: string, tables: TableName[]): string[] {
  const files: string[] = [];
  for (const t of tables) {
    const file = join(root, partitionPath(t, rec.name), 'part-0.jsonl');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, rec.rows[t].map((r) => jsonlLine(t, rec.name, r)).join(''));
    files.push(file);
  }
  return files;
}
