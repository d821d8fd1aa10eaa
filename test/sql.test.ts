/**
 * perfpoke sql: queries over one or many recordings (files, --kcore
 * directories, export folders, globs) give what the other commands print;
 * a folder of several exports read with DuckDB's own
 * read_parquet(…, hive_partitioning = true) gives the same rows as
 * `perfpoke sql` over that folder and over the recordings themselves.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { repoRoot, runCli } from './cli.js';
import { expandGlob } from '../src/export/inputs.js';
import { recordingName } from '../src/export/collect.js';
import { tempDir } from './temp-dir.js';

const real = (n: string): string => join(repoRoot, 'test', 'fixtures', 'real-kernel', n);
const A = real('perf-alone');
const B = real('perf-kcore');
const C = real('perfpoke-kcore');
const PER_KIND = 'SELECT recording, kind, count(*) AS n FROM pokes GROUP BY ALL ORDER BY ALL';

let dir: string;
let lake: string;
let jsonl: string;

before(() => {
  dir = tempDir('perfpoke-sql-');
  lake = join(dir, 'lake');
  jsonl = join(dir, 'jsonl');
  const r = runCli(['export', '-i', A, B, C, '-o', lake]);
  assert.equal(r.status, 0, r.stderr);
});

after(() => rmSync(dir, { recursive: true, force: true }));

function sqlJson(args: string[]): Record<string, unknown>[] {
  const r = runCli(['sql', ...args, '--format', 'jsonl']);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** pokes per kind per recording, from `perfpoke pokes --json`. */
function expectedPerKind(inputs: [string, string][]): string[][] {
  const out: string[][] = [];
  for (const [name, path] of inputs) {
    const r = runCli(['pokes', '-i', path, '--json']);
    const byKind = new Map<string, number>();
    assert.equal(r.status, 0, r.stderr);
    const pokes = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; kind: string })
      .filter((o) => o.type === 'poke');
    for (const p of pokes) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + 1);
    for (const [k, n] of byKind) out.push([name, k, String(n)]);
  }
  return out.sort((x, y) => (x.join('\0') < y.join('\0') ? -1 : 1));
}

test('pokes per kind per recording over two recordings: what `pokes --json` counts', () => {
  const r = runCli(['sql', '-i', A, B, PER_KIND, '--format', 'csv']);
  assert.equal(r.status, 0, r.stderr);
  const [head, ...lines] = r.stdout.trimEnd().split('\n');
  assert.equal(head, 'recording,kind,n');
  const want = expectedPerKind([
    ['perf-alone', A],
    ['perf-kcore', B],
  ]);
  assert.deepEqual(
    lines.map((l) => l.split(',')),
    want,
  );
  assert.ok(want.length > 10);
});

test('read_parquet(…, hive_partitioning = true) over the export folder: the same rows as perfpoke sql', async () => {
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    const queries = [
      PER_KIND,
      'SELECT recording, "offset", addr, kind, sym, verdict, time_ns FROM pokes ORDER BY ALL',
      'SELECT recording, site_start, pokes, kinds FROM sites ORDER BY ALL',
    ];
    for (const q of queries) {
      const table = /FROM (\w+)/.exec(q)![1]!;
      const direct = q.replace(
        `FROM ${table}`,
        `FROM read_parquet('${lake}/${table}/*/*.parquet', hive_partitioning = true)`,
      );
      const duck = (await conn.runAndReadAll(direct)).getRowObjectsJson();
      const fromLake = sqlJson(['-i', lake, q]);
      assert.ok(duck.length > 10, q);
      assert.deepEqual(fromLake, duck, q);
      // and the recordings themselves, read without an export
      assert.deepEqual(sqlJson(['-i', A, B, C, q]), duck, `${q} (recordings)`);
    }
  } finally {
    conn.closeSync();
  }
});

test('inputs: a glob the shell did not expand, an export folder mixed with a recording', () => {
  const fixtures = join(repoRoot, 'test/fixtures/real-kernel');
  const viaGlob = sqlJson(['-i', join(fixtures, 'perf*'), PER_KIND]);
  const matches = readdirSync(fixtures)
    .filter((n) => n.startsWith('perf'))
    .map((n) => join(fixtures, n));
  assert.ok(matches.length >= 3);
  assert.deepEqual(viaGlob, sqlJson(['-i', ...matches, PER_KIND]), 'the glob reads what the shell would have listed');
  const viaLake = sqlJson(['-i', lake, PER_KIND]);
  assert.deepEqual(
    viaGlob.filter((r) => viaLake.some((l) => l.recording === r.recording)),
    viaLake,
  );
  const sim = join(dir, 'sim');
  assert.equal(runCli(['sim', '-o', sim, '--flips', '3', '--size', '20000']).status, 0);
  const mixed = sqlJson(['-i', lake, sim, 'SELECT recording, intel_pt FROM recordings ORDER BY recording']);
  assert.deepEqual(mixed, [
    { recording: 'perf-alone', intel_pt: false },
    { recording: 'perf-kcore', intel_pt: false },
    { recording: 'perfpoke-kcore', intel_pt: false },
    { recording: 'sim', intel_pt: true },
  ]);
  // --branches on an intel_pt recording: one row per branch `decode --itrace=b` prints
  const b = runCli(['decode', '-i', sim, '--itrace=b']).stdout.split('\n').filter(Boolean).length;
  const [n] = sqlJson(['-i', sim, '--branches', 'SELECT count(*) AS n FROM branches']);
  assert.equal(Number(n!.n), b);
  assert.ok(b > 100);
});

test('table output: aligned columns and a row count', () => {
  const r = runCli(['sql', '-i', A, 'SELECT kind, count(*) AS n FROM pokes GROUP BY kind ORDER BY n DESC LIMIT 2']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^kind\s+n$/);
  assert.match(lines[1]!, /^-+\s+-+$/);
  assert.match(lines[2]!, /^jump-label\s+\d+$/);
  assert.equal(lines.at(-1), '(2 rows)');
});

test('bad input: one line, exit 2', () => {
  const cases: [string[], RegExp][] = [
    [['-i', A, 'SELEC nothing'], /^perfpoke: sql: Parser Error: /],
    [['-i', A, 'SELECT nope FROM pokes'], /^perfpoke: sql: Binder Error: /],
    [['-i', join(dir, 'missing.data'), 'SELECT 1'], /^perfpoke: .*missing\.data/],
    [['-i', join(dir, 'none-*'), 'SELECT 1'], /^perfpoke: -i .*none-\*: no file matches/],
    [['-i', A, 'SELECT 1', '--format', 'xml'], /^perfpoke: --format: expected table, csv or jsonl/],
    [['-i', A], /^perfpoke: sql: give the query/],
    [['-i', lake, B, 'SELECT 1'], /^perfpoke: -i .*perf-kcore: recording 'perf-kcore' is also in /],
    [['-i', jsonl, 'SELECT 1'], /^perfpoke: -i .*jsonl: an export folder without Parquet files/],
  ];
  assert.equal(runCli(['export', '-i', A, '-o', jsonl, '--format', 'jsonl']).status, 0);
  for (const [args, re] of cases) {
    const r = runCli(['sql', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  assert.equal(runCli(['sql', '--help']).status, 0);
});

test('globs and recording names', () => {
  const g = join(dir, 'globs');
  for (const f of ['a.data', 'b.data', 'ab.data', '.hidden.data', 'run1/data', 'run2/data', 'x y/data']) {
    mkdirSync(join(g, f, '..'), { recursive: true });
    writeFileSync(join(g, f), '');
  }
  const rel = (ps: string[]): string[] => ps.map((p) => p.slice(g.length + 1));
  assert.deepEqual(rel(expandGlob(join(g, '*.data'))), ['a.data', 'ab.data', 'b.data']);
  assert.deepEqual(rel(expandGlob(join(g, '?.data'))), ['a.data', 'b.data']);
  assert.deepEqual(rel(expandGlob(join(g, '[!a]*.data'))), ['b.data']);
  assert.deepEqual(rel(expandGlob(join(g, '.*.data'))), ['.hidden.data']);
  assert.deepEqual(rel(expandGlob(join(g, 'run*/data'))), ['run1/data', 'run2/data']);
  assert.deepEqual(expandGlob(join(g, 'none*')), []);
  assert.deepEqual(['x/perf.data', 'runs/run1/', 'runs/run1/data', join(g, 'x y/data'), 'a/.data'].map(recordingName), [
    'perf',
    'run1',
    'run1',
    'x_y',
    'recording',
  ]);
});
