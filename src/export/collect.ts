/**
 * Every table of one recording (a perf.data file or a `perf record --kcore`
 * directory), in memory: what `perfpoke export` writes and `perfpoke sql`
 * queries when it is handed a recording rather than an export.
 */
import { basename, dirname } from 'node:path';
import { RecordType } from '../abi/record-type.js';
import { loadPtRecording, type PtRecording } from '../intelpt/flow/recording.js';
import { loadMachine, type Machine } from '../machine/from-perf-data.js';
import { resolveInput } from '../machine/kcore-dir.js';
import { pokeTables } from './poke-rows.js';
import type { CheckOutcome } from '../machine/check-verdict.js';
import { ptRows } from './pt-rows.js';
import { TABLE_NAMES, type RecordingTables, type Row, type TableName } from './schema.js';
import { headerRow, recordRows, sampleRows } from './session-rows.js';

export interface CollectOptions {
  /** The recording's name (the `recording` column); default: recordingName(input). */
  name?: string;
  /** Fill `branches` too (PT recordings only; one row per taken branch: large). */
  branches?: boolean;
}

/**
 * A name for the `recording` column and the Hive partition folder: the
 * input's base name without a `.data` suffix (a --kcore directory, or its
 * `data` file: the directory's name), reduced to [A-Za-z0-9._-] so it is the same string in a
 * path, a SQL literal and every engine's partition parser.
 */
export function recordingName(input: string): string {
  const path = input.replace(/\/+$/, '');
  // DIR/data of a --kcore directory is named after DIR, as DIR itself is
  const base = basename(path) === 'data' ? basename(dirname(path)) : basename(path);
  return sanitizeName(base.replace(/\.data$/, '') || 'recording');
}

export function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
}

export async function collectTables(input: string, opts: CollectOptions = {}): Promise<RecordingTables> {
  return (await collectRecording(input, opts)).tables;
}

/** The tables and what they were made from (perfpoke report also needs the Machine: check reasons, copies). */
export interface CollectedRecording {
  tables: RecordingTables;
  machine: Machine;
  /** `check`'s judgement of the machine (verdict, reasons), made once for the tables. */
  outcome: CheckOutcome;
  /** Set for intel_pt recordings (its traces were read once, for `errors`). */
  pt?: PtRecording;
}

export async function collectRecording(input: string, opts: CollectOptions = {}): Promise<CollectedRecording> {
  const name = opts.name !== undefined ? sanitizeName(opts.name) : recordingName(input);
  const { dataFile, kcoreDir } = resolveInput(input);
  const records = await recordRows(dataFile);
  const isPt = records.rows.some((r) => r.record_type === RecordType.AUXTRACE_INFO);
  const pt = isPt ? await loadPtRecording(input) : undefined;
  const machine = pt?.machine ?? (await loadMachine(input));
  const samples = await sampleRows(dataFile, machine);
  const { pokes, sites, outcome } = pokeTables(machine);
  const { errors, branches } = pt ? ptRows(pt, !!opts.branches) : { errors: [], branches: [] };
  const header = await headerRow(dataFile);
  const first = records.first ?? null;
  const last = records.last ?? null;
  const recording: Row = {
    ...header,
    first_time_ns: first,
    last_time_ns: last,
    duration_ns: first !== null && last !== null ? last - first : null,
    records: records.rows.length,
    samples: samples.length,
    pokes: pokes.length,
    kcore_dir: kcoreDir !== undefined,
    intel_pt: isPt,
    verdict: outcome.verdict,
  };
  const rows = Object.fromEntries(TABLE_NAMES.map((t) => [t, [] as Row[]])) as Record<TableName, Row[]>;
  Object.assign(rows, { recordings: [recording], records: records.rows, samples, pokes, sites, errors, branches });
  return { tables: { name, rows }, machine, outcome, ...(pt ? { pt } : {}) };
}
