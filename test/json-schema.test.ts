/**
 * Every command's --json output on the fixtures is JSON Lines in the one
 * convention (src/format/json-lines.ts): each line one object whose `type`
 * names a schema in docs/json/, valid against it (ajv), summaries last.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { simulate } from '../src/sim/simulate.js';
import { runCli, repoRoot } from './cli.js';

const schemaDir = join(repoRoot, 'docs', 'json');
const ajv = new Ajv({ allErrors: true, strict: true });
const validators = new Map<string, ValidateFunction>();
for (const f of readdirSync(schemaDir).filter((n) => n.endsWith('.schema.json')))
  ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, f), 'utf8')) as object, f);
for (const f of readdirSync(schemaDir).filter((n) => n.endsWith('.schema.json') && n !== 'common.schema.json'))
  validators.set(f.replace('.schema.json', ''), ajv.getSchema(f)!);

const dir = mkdtempSync(join(tmpdir(), 'perfpoke-json-schema-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const rec = (n: string): string => join(repoRoot, 'test', 'fixtures', 'recorded', n);
const features = (n: string): string => join(repoRoot, 'test', 'fixtures', 'features', n);
const kcoreBasic = join(repoRoot, 'test', 'fixtures', 'kcore', 'basic');

/** Run one --json command; check every line; return the types in order. */
function validLines(args: string[]): string[] {
  const r = runCli(args);
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  assert.ok(r.stdout.endsWith('\n'), 'ends with a newline');
  const types: string[] = [];
  for (const [i, line] of r.stdout.slice(0, -1).split('\n').entries()) {
    const where = `${args.join(' ')} line ${i + 1}`;
    const o = JSON.parse(line) as { type?: unknown };
    assert.equal(typeof o.type, 'string', `${where}: no type`);
    const v = validators.get(o.type as string);
    assert.ok(v, `${where}: no docs/json/${String(o.type)}.schema.json`);
    assert.ok(v(o), `${where}: ${ajv.errorsText(v.errors)}\n${line.slice(0, 300)}`);
    types.push(o.type as string);
  }
  return types;
}

const SHOW_ALL = ['--show-task-events', '--show-mmap-events', '--show-switch-events', '--show-lost-events'];

test('script --json: sample and event lines', () => {
  const seen = new Set<string>();
  for (const f of ['callchain.data', 'switch.data', 'tp.data', 'group-read.data', 'addr.data'])
    for (const t of validLines(['script', '--json', '-i', rec(f), ...SHOW_ALL])) seen.add(t);
  for (const t of validLines(['script', '--json', '-i', rec('pipe.data'), '--show-round-events'])) seen.add(t);
  assert.deepEqual([...seen].sort(), ['event', 'sample']);
});

test('dump --json: one record line per record', () => {
  for (const f of [rec('callchain.data'), rec('pipe.data'), rec('bpf.data'), features('system.data')]) {
    const types = validLines(['dump', '--json', '-i', f]);
    assert.ok(types.length > 10 && types.every((t) => t === 'record'), f);
  }
  assert.ok(validLines(['dump', '--json', '-i', join(kcoreBasic, 'data')]).length > 0);
});

test('stats --json and header --json end with their summary', () => {
  for (const f of [rec('zstd.data'), rec('pipe.data'), features('group-clock.data')]) {
    const st = validLines(['stats', '--json', '-i', f]);
    assert.equal(st.at(-1), 'stats_summary');
    assert.ok(st.includes('record_count') && st.includes('event_count'));
    const h = validLines(['header', '--json', '-i', f]);
    assert.equal(h[0], 'file_header');
    assert.ok(h.slice(1).length > 0 && h.slice(1).every((t) => t === 'feature'), f);
  }
});

test('pt-dump --json, decode --json and sim --json on a simulated intel_pt recording', () => {
  const out = join(dir, 'sim');
  const sim = validLines(['sim', '--json', '-o', out, '--seed', '5', '--size', '20000', '--cpus', '2']);
  assert.deepEqual(sim, ['sim_summary']);
  const pt = validLines(['pt-dump', '--json', '-i', join(out, 'data')]);
  assert.deepEqual(new Set(pt), new Set(['auxtrace_info', 'auxtrace', 'packet']));
  const lost = join(dir, 'lost');
  simulate({ out: lost, seed: 21, size: 50_000, flips: 8, truth: false, lostPokes: [0] });
  const d = validLines(['decode', '--json', '-i', lost]);
  assert.equal(d.at(-1), 'decode_summary');
  assert.ok(d.includes('decode_error') && d.includes('decode_cpu'));
});

test('image --json: instructions, gaps, then the summary', () => {
  const a = validLines(['image', '--json', '-i', kcoreBasic, '--addr', 'do_sys_open+0x10', '--len', '5']);
  assert.deepEqual(a, ['image_insn', 'image_summary']);
  const b = validLines([
    'image',
    '--json',
    '-i',
    kcoreBasic,
    '--addr',
    '0xffffffffc0200000',
    '--len',
    '16',
    '--time',
    '1000.000012',
  ]);
  assert.ok(b.includes('image_gap') && b.includes('image_insn') && b.at(-1) === 'image_summary');
});

test('export, check and pokes --json: their lines follow the schemas', () => {
  const lake = join(dir, 'lake');
  const e = validLines(['export', '--json', '--format', 'jsonl', '-i', kcoreBasic, rec('zstd.data'), '-o', lake]);
  assert.deepEqual(e, ['export', 'export']);
  const c = validLines(['check', '--json', '-i', kcoreBasic]);
  assert.ok(c.length > 0 && c.at(-1) === 'check', c.join(','));
  const p = validLines(['pokes', '--json', '-i', kcoreBasic]);
  assert.ok(p.length > 5 && p.every((t) => t === 'poke'));
});
