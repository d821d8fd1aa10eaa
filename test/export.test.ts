/**
 * perfpoke export: the tables hold what the other commands print for the
 * same recording (stats --json, script --json, pokes --json, check --json,
 * decode --json), the Parquet files carry the documented column types
 * (read back by DuckDB), the JSON Lines export has the same rows, and a
 * failed export leaves nothing behind.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { repoRoot, runCli } from './cli.js';
import { basicSites, writeKcoreDir } from './fixtures/kcore/scenario.js';
import { TABLES, type TableName } from '../src/export/schema.js';
import { tempDir } from './temp-dir.js';

const fx = (p: string): string => join(repoRoot, 'test', 'fixtures', p);
const REAL = ['perf-alone', 'perf-kcore', 'perfpoke-kcore'].map((n) => fx(`real-kernel/${n}`));
const RECORDED = ['callchain', 'group-read', 'pipe', 'zstd', 'tp', 'switch'].map((n) => fx(`recorded/${n}.data`));
const NAME = (p: string): string =>
  p
    .replace(/\/$/, '')
    .split('/')
    .pop()!
    .replace(/\.data$/, '');

let dir: string;
let lake: string;
let jsonl: string;
let sim: string;
let dropped: string;
let conn: DuckDBConnection;
let all: string[];

before(async () => {
  dir = tempDir('perfpoke-export-');
  lake = join(dir, 'lake');
  jsonl = join(dir, 'jsonl');
  // an intel_pt recording whose pokes were lost: the decoder reports errors
  sim = join(dir, 'sim-lost');
  assert.equal(runCli(['sim', '-o', sim, '--no-text-poke', '--flips', '6', '--size', '40000']).status, 0);
  // a kcore recording with pokes 1 and 4 dropped: stale sites with windows
  dropped = join(dir, 'dropped');
  writeKcoreDir(dropped, basicSites(), { drop: new Set([1, 4]), withTrampoline: true });
  all = [...REAL, ...RECORDED, sim, dropped];
  const r = runCli(['export', '-i', ...all, '-o', lake, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const j = runCli(['export', '-i', ...all, '-o', jsonl, '--format', 'jsonl']);
  assert.equal(j.status, 0, j.stderr);
  conn = await (await DuckDBInstance.create(':memory:')).connect();
});

after(() => {
  conn?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

type Obj = Record<string, unknown>;

/** One recording's partition of a table, in file order. */
async function rows(table: TableName, name: string): Promise<Obj[]> {
  const file = join(lake, table, `recording=${name}`, 'part-0.parquet');
  const r = await conn.runAndReadAll(`SELECT * FROM read_parquet('${file}', hive_partitioning = false)`);
  // file offsets as numbers, as the other commands print them (DuckDB's JSON form makes every BIGINT a string)
  return (r.getRowObjectsJson() as Obj[]).map((o) => {
    for (const k of ['offset', 'trace_offset']) if (typeof o[k] === 'string') o[k] = Number(o[k]);
    return o;
  });
}

/** A JSON Lines output whose exit status is one of `codes`: its objects of one type. */
const jsonLinesOf = (args: string[], type: string, codes: number[]): Obj[] => {
  const r = runCli(args);
  assert.ok(codes.includes(r.status ?? -1), `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Obj)
    .filter((o) => o.type === type);
};

/** A JSON Lines output (docs/json/README.md): its objects of one type. */
const jsonLines = (args: string[], type: string): Obj[] => {
  const r = runCli(args);
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Obj)
    .filter((o) => o.type === type);
};

test('records: one row per record, per type as `stats --json` counts them', async () => {
  for (const p of [...REAL, ...RECORDED]) {
    const args = ['stats', '-i', p.endsWith('.data') ? p : join(p, 'data'), '--json'];
    const st = { total: jsonLines(args, 'stats_summary')[0]!.total as number, byType: {} as Record<string, number> };
    for (const c of jsonLines(args, 'record_count'))
      st.byType[c.name === 'UNKNOWN' ? `UNKNOWN(${c.record_type})` : (c.name as string)] = c.count as number;
    const recs = await rows('records', NAME(p));
    assert.equal(recs.length, st.total, p);
    const byType: Record<string, number> = {};
    for (const r of recs) {
      const k = r.type_name === 'UNKNOWN' ? `UNKNOWN(${r.record_type})` : (r.type_name as string);
      byType[k] = (byType[k] ?? 0) + 1;
    }
    assert.deepEqual(byType, st.byType, p);
    const [rec] = await rows('recordings', NAME(p));
    assert.equal(Number(rec!.records), st.total);
  }
});

test('samples: the samples `script --json` prints, in its order, same fields', async () => {
  let compared = 0;
  for (const p of RECORDED) {
    const lines = runCli(['script', '-i', p, '--json'])
      .stdout.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Obj)
      .filter((o) => o.type === 'sample');
    const ours = await rows('samples', NAME(p));
    assert.equal(ours.length, lines.length, p);
    lines.forEach((s, i) => {
      const o = ours[i]!;
      assert.equal(o.offset, s.offset, `${p} #${i}`);
      for (const k of ['pid', 'tid', 'cpu', 'event', 'comm'] as const)
        if (k in s) assert.equal(o[k], s[k], `${p} ${k}`);
      if ('time_ns' in s) assert.equal(o.time_ns, s.time_ns);
      if ('period' in s) assert.equal(String(o.period), String(s.period));
      if ('ip' in s) assert.equal(o.ip, BigInt(s.ip as string).toString());
      if (Array.isArray(s.callchain) && s.callchain.length < 127)
        assert.equal((o.callchain as unknown[]).length, s.callchain.length, `${p} #${i} callchain`);
      compared++;
    });
  }
  assert.ok(compared > 200, `compared ${compared} samples`);
});

test('pokes: what `pokes --json` lists, in its order: time, cpu, addr, sym, kind, bytes, instructions', async () => {
  for (const p of [...REAL, dropped]) {
    const want = jsonLinesOf(['pokes', '-i', p, '--json'], 'poke', [0]);
    const ours = await rows('pokes', NAME(p));
    assert.equal(ours.length, want.length, p);
    assert.ok(want.length > 10);
    want.forEach((w, i) => {
      const o = ours[i]!;
      assert.deepEqual(
        [o.time_ns, o.cpu, `0x${BigInt(o.addr as string).toString(16)}`, o.sym ?? '', o.ksym ?? undefined, o.kind],
        [w.time_ns, w.cpu, w.addr, w.sym, w.ksym, w.kind],
        `${p} poke ${i}`,
      );
      assert.deepEqual([o.old, o.new, o.before, o.after, o.offset], [w.old, w.new, w.before, w.after, w.file_offset]);
      assert.equal(o.verdict === 'consistent', w.consistent, `${p} poke ${i} verdict ${o.verdict}`);
    });
  }
});

test('sites and verdicts: what `check --json` reports (dropped pokes: stale sites and windows)', async () => {
  for (const p of [...REAL, dropped, sim]) {
    const args = ['check', '-i', p, '--json'];
    const c = jsonLinesOf(args, 'check', [0, 1, 4])[0]!;
    const staleLines = jsonLinesOf(args, 'stale', [0, 1, 4]);
    const sites = await rows('sites', NAME(p));
    assert.equal(sites.length, c.sites, p);
    const stale = sites.filter((s) => Number(s.stale) > 0);
    const nsOf = (t: unknown) => (t === null ? null : (t as Obj).time_ns);
    assert.deepEqual(
      stale.map((s) => [
        `0x${BigInt(s.site_start as string).toString(16)}`,
        s.stale,
        s.lost_after_ns,
        s.lost_before_ns,
      ]),
      staleLines.map((d) => [d.site_start, d.stale_pokes, nsOf(d.missing_after), nsOf(d.missing_before)]),
      p,
    );
    const pokes = await rows('pokes', NAME(p));
    assert.equal(pokes.filter((x) => x.verdict === 'stale').length, c.stale);
    const [rec] = await rows('recordings', NAME(p));
    assert.equal(rec!.verdict, c.verdict);
    if (p === dropped)
      assert.ok((c.stale as number) > 0 && c.verdict === 'inconsistent', 'the dropped recording is stale');
  }
});

test('errors: the trace errors `decode --json` reports for an intel_pt recording', async () => {
  const d = { errorList: jsonLines(['decode', '-i', sim, '--json'], 'decode_error') };
  const ours = await rows('errors', 'sim-lost');
  assert.ok(d.errorList.length > 0);
  assert.deepEqual(
    ours.map((o) => [o.cpu, o.code, o.message, `0x${BigInt(o.ip as string).toString(16)}`, o.time_ns, o.trace_offset]),
    d.errorList.map((e) => [e.cpu, e.code, e.message, e.ip, e.time_ns, e.offset]),
  );
  const [rec] = await rows('recordings', 'sim-lost');
  assert.equal(rec!.intel_pt, true);
  assert.equal((await rows('errors', 'perf-alone')).length, 0);
});

test('Parquet files carry the documented column types; the recording is the Hive partition', async () => {
  for (const t of Object.keys(TABLES) as TableName[]) {
    if (t === 'branches') continue; // written with --branches only (sql.test.ts)
    const glob = join(lake, t, '*', '*.parquet');
    const d = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${glob}', hive_partitioning = true)`))
      .getRowObjectsJson()
      .map((r) => [r.column_name, r.column_type]);
    assert.deepEqual(d, [...TABLES[t].map((c) => [c.name, c.type]), ['recording', 'VARCHAR']], t);
    assert.deepEqual(readdirSync(join(lake, t)).sort(), all.map((p) => `recording=${NAME(p)}`).sort(), t);
  }
  assert.deepEqual(
    readdirSync(lake).sort(),
    ['errors', 'pokes', 'recordings', 'records', 'samples', 'sites'],
    'no temporary folder left',
  );
});

test('docs/tables.md lists every column of every table with its type', () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'tables.md'), 'utf8');
  for (const [t, cols] of Object.entries(TABLES)) {
    const section = doc.split(`### ${t}\n`)[1]?.split('\n### ')[0] ?? '';
    const listed = [...section.matchAll(/^\| (\w+) \| ([A-Z[\]]+) \|/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(listed, [['recording', 'VARCHAR'], ...cols.map((c) => [c.name, c.type])], t);
  }
});

test('JSON Lines export: same rows as the Parquet one, in the JSON convention', async () => {
  for (const t of ['pokes', 'samples', 'records', 'sites', 'recordings'] as TableName[]) {
    for (const p of [REAL[0]!, RECORDED[0]!]) {
      const name = NAME(p);
      const lines = readFileSync(join(jsonl, t, `recording=${name}`, 'part-0.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Obj);
      const ours = await rows(t, name);
      assert.equal(lines.length, ours.length, `${t} ${name}`);
      lines.forEach((l, i) => {
        assert.equal(l.recording, name);
        assert.equal(typeof l.type, 'string');
        const o = ours[i]!;
        if ('time_ns' in o) assert.equal(l.time_ns, o.time_ns);
        if ('addr' in o) assert.equal(l.addr, `0x${BigInt(o.addr as string).toString(16)}`);
        if ('kind' in o) assert.equal(l.kind, o.kind);
        if ('offset' in o) assert.equal(l.offset, o.offset);
      });
    }
  }
});

test('bad input: one line, exit 2, nothing written', () => {
  const bad = join(dir, 'bad.data');
  writeFileSync(bad, Buffer.from('PERFILE2 not really a perf file'));
  const out = join(dir, 'bad-lake');
  const r = runCli(['export', '-i', bad, '-o', out]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^perfpoke: .*bad\.data/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.deepEqual(existsSync(out) ? readdirSync(out) : [], []);
  const f = runCli(['export', '-i', REAL[0]!, '-o', out, '--format', 'csv']);
  assert.equal(f.status, 2);
  assert.match(f.stderr, /^perfpoke: --format: expected parquet or jsonl/);
  assert.equal(runCli(['export', '--help']).status, 0);
});

test("exporting again replaces that recording's partitions only (branches too)", () => {
  const out = join(dir, 'again');
  assert.equal(runCli(['export', '-i', sim, REAL[0]!, '-o', out, '--branches']).status, 0);
  const parts = (t: string): string[] => readdirSync(join(out, t)).sort();
  assert.deepEqual(parts('branches'), ['recording=perf-alone', 'recording=sim-lost']);
  assert.equal(runCli(['export', '-i', sim, '-o', out]).status, 0);
  assert.deepEqual(parts('branches'), ['recording=perf-alone']);
  assert.deepEqual(parts('pokes'), ['recording=perf-alone', 'recording=sim-lost']);
  assert.deepEqual(
    readdirSync(out).filter((n) => n.startsWith('.')),
    [],
  );
});
