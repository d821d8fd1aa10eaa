/**
 * `decode` says on stderr why the code image will fail a kernel trace —
 * no kcore_dir, addresses outside it, no TEXT_POKE records — where perf is
 * silent and only shows trace errors. On a simulated intel_pt recording
 * (src/sim) and copies of it made by `inject --strip` and a cut kcore.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { loadKcoreDir } from '../src/machine/kcore-dir.js';
import { writeElfCore } from '../src/machine/elf-core-writer.js';
import { runCli } from './cli.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('perfpoke-decode-warn-');
test.after(() => rmSync(dir, { recursive: true, force: true }));
const full = join(dir, 'full');
simulate({ out: full, seed: 21, size: 50_000, flips: 8, truth: false });

function warnings(input: string): { errors: number; warnings: string[] } {
  const r = runCli(['decode', '-i', input, '--itrace=e']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.split('\n').filter(Boolean);
  const m = /^(\d+) instruction trace errors$/.exec(lines.at(-1) ?? '');
  assert.ok(m, r.stderr);
  return { errors: Number(m[1]), warnings: lines.filter((l) => l.startsWith('perfpoke decode: warning: ')) };
}

test('decode: no warning when the image holds the traced code and the pokes are there', () => {
  const w = warnings(full);
  assert.equal(w.errors, 0);
  assert.deepEqual(w.warnings, []);
});

test('decode warns when there is no kcore_dir (and the errors follow)', () => {
  const d = join(dir, 'nokcore');
  mkdirSync(d);
  cpSync(join(full, 'data'), join(d, 'data'));
  const w = warnings(d);
  assert.ok(w.errors > 0);
  assert.equal(w.warnings.length, 1);
  assert.match(w.warnings[0]!, /trace includes kernel code but the recording has no kcore_dir.*perf record --kcore/);
});

test('decode warns when the kernel is traced but the TEXT_POKE records are gone', () => {
  const d = join(dir, 'strip');
  const s = runCli(['inject', '--strip', 'text_poke', '-i', full, '-o', d]);
  assert.equal(s.status, 0, s.stderr);
  const w = warnings(d);
  assert.ok(w.errors > 0, 'the rewritten code no longer matches the trace');
  assert.equal(w.warnings.length, 1);
  assert.match(w.warnings[0]!, /trace includes kernel code but the file has no TEXT_POKE records/);
});

test('decode warns about trace errors at addresses kcore_dir does not hold', () => {
  const d = join(dir, 'cut');
  cpSync(full, d, { recursive: true });
  const k = loadKcoreDir(join(full, 'kcore_dir'));
  // keep only the first quarter of every segment: the trace runs into code the image lacks
  const segs = k.segments.map((s) => ({ vaddr: s.vaddr, bytes: s.bytes.subarray(0, s.bytes.length >> 2) }));
  writeFileSync(join(d, 'kcore_dir', 'kcore'), writeElfCore(segs));
  const w = warnings(d);
  assert.ok(w.errors > 0);
  assert.equal(w.warnings.length, 1, w.warnings.join('\n'));
  assert.match(
    w.warnings[0]!,
    /^perfpoke decode: warning: \d+ trace error\(s\) at kernel addresses kcore_dir does not hold \(first 0xf{8}/,
  );
});
