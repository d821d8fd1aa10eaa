/**
 * Test helpers for perfpoke's JSON Lines (src/format/json-lines.ts): parse
 * a command's stdout, validate every line against docs/json/<type>.schema.json
 * with ajv, and turn `pokes --json` lines into the flat shape the perf
 * comparisons use (bare hex address, spaced bytes as perf prints them).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { repoRoot, runCli } from './cli.js';

export type Line = { type: string } & Record<string, unknown>;

export function parseLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => {
      const o = JSON.parse(l) as Line;
      assert.equal(typeof o.type, 'string', `line ${i + 1} has no type: ${l.slice(0, 200)}`);
      return o;
    });
}

let validators: Map<string, ValidateFunction> | undefined;
function schemas(): Map<string, ValidateFunction> {
  if (validators) return validators;
  const dir = join(repoRoot, 'docs', 'json');
  const ajv = new Ajv({ allErrors: true, strict: true });
  const files = readdirSync(dir).filter((f) => f.endsWith('.schema.json'));
  for (const f of files) ajv.addSchema(JSON.parse(readFileSync(join(dir, f), 'utf8')) as object, f);
  validators = new Map();
  for (const f of files) validators.set(f.replace(/\.schema\.json$/, ''), ajv.getSchema(f)!);
  return validators;
}

/** Every line matches the schema named by its type (a type without a schema fails). */
export function validateLines(lines: Line[]): void {
  const v = schemas();
  for (const l of lines) {
    const f = v.get(l.type);
    assert.ok(f, `no docs/json/${l.type}.schema.json`);
    assert.ok(f(l), `${l.type} line fails its schema: ${JSON.stringify(f.errors)}\n${JSON.stringify(l)}`);
  }
}

/** The last line, which must be the `check` summary. */
export function checkSummary(lines: Line[]): Line {
  const last = lines.at(-1);
  assert.equal(last?.type, 'check', 'the last line is the check summary');
  return last!;
}

const spaced = (h: string): string => h.replace(/(..)(?!$)/g, '$1 ');

export interface FlatPoke {
  time: string;
  addr: string;
  sym: string;
  oldLen: number;
  newLen: number;
  old: string;
  new: string;
  kind: string;
  before: string;
  after: string;
  fileOffset: number;
  consistent: boolean;
  copy: boolean;
}

/** `pokes --json` stdout, validated, as flat pokes. */
export function flatPokes(stdout: string): FlatPoke[] {
  const lines = parseLines(stdout);
  validateLines(lines);
  return lines.map((l) => ({
    time: l.time as string,
    addr: (l.addr as string).slice(2),
    sym: l.sym as string,
    oldLen: l.old_len as number,
    newLen: l.new_len as number,
    old: spaced(l.old as string),
    new: spaced(l.new as string),
    kind: l.kind as string,
    before: l.before as string,
    after: l.after as string,
    fileOffset: l.file_offset as number,
    consistent: l.consistent as boolean,
    copy: l.copy_of !== undefined,
  }));
}

/** `check --json`: every line valid against docs/json, the summary last. */
export function checkJson(input: string): { status: number; lines: Line[]; summary: Line } {
  const r = runCli(['check', '-i', input, '--json']);
  assert.equal(r.stderr, '', r.stderr);
  const lines = parseLines(r.stdout);
  validateLines(lines);
  const summary = checkSummary(lines);
  assert.equal(summary.exit_code, r.status, 'exit_code is the exit status');
  return { status: r.status, lines, summary };
}
export const ofType = (ls: Line[], t: string): Line[] => ls.filter((l) => l.type === t);
export const reasonCodes = (s: Line): string[] => (s.reasons as { code: string }[]).map((x) => x.code);
