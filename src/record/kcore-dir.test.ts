/**
 * kcore trimming on a synthetic ELF64 core (this machine has no /proc/kcore):
 * a fake /proc with kcore, kallsyms and modules; the trimmed copy is checked
 * with binutils' readelf and byte by byte against the source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

import { FormatError } from '../io/errors.js';
import { copyKcoreDir, planTrim, readElfCore } from './kcore-dir.js';
import { ETEXT, fakeProc, makeCore, PAGE, pat, SEGS, STEXT } from '../../test/kcore-fixture.js';

test('copyKcoreDir keeps only the page-rounded kernel text and module windows', (t) => {
  const proc = fakeProc();
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  const dest = join(proc, 'out', 'kcore_dir');
  copyKcoreDir(dest, proc);
  assert.equal(readFileSync(join(dest, 'kallsyms'), 'utf8'), readFileSync(join(proc, 'kallsyms'), 'utf8'));
  assert.equal(readFileSync(join(dest, 'modules'), 'utf8'), readFileSync(join(proc, 'modules'), 'utf8'));

  // Expected windows, from the fixture's design: text pages 16..40, module pages 4..9.
  const want = [
    { seg: 1, firstPage: 16, pages: 41 - 16 },
    { seg: 2, firstPage: 4, pages: 10 - 4 },
  ];
  const re = spawnSync('readelf', ['-lW', join(dest, 'kcore')], { encoding: 'utf8' });
  if (re.error) {
    t.diagnostic('readelf not installed: checked with our own ELF reader only');
  } else {
    assert.equal(re.status, 0, re.stderr);
    const loads = [
      ...re.stdout.matchAll(/^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)/gm),
    ];
    assert.equal(loads.length, 2, re.stdout);
    loads.forEach((m, i) => {
      const w = want[i]!;
      assert.equal(BigInt(m[2]!), SEGS[w.seg]!.vaddr + BigInt(w.firstPage * PAGE), `LOAD ${i} vaddr`);
      assert.equal(Number(m[3]!), w.pages * PAGE, `LOAD ${i} filesz`);
      assert.equal(Number(m[4]!), w.pages * PAGE, `LOAD ${i} memsz`);
    });
    assert.doesNotMatch(re.stdout, /NOTE/);
  }
  const out = readFileSync(join(dest, 'kcore'));
  const core = readElfCore((o, n) => out.subarray(o, o + n));
  assert.equal(core.segments.length, 2);
  core.segments.forEach((s, i) => {
    const w = want[i]!;
    assert.equal(Number(s.offset) % PAGE, 0, 'segment data page aligned');
    for (const probe of [0, 1, PAGE + 7, w.pages * PAGE - 1]) {
      assert.equal(out[Number(s.offset) + probe], pat(w.seg, w.firstPage * PAGE + probe), `segment ${i} byte ${probe}`);
    }
  });
  assert.ok(out.length < makeCore().length / 2, 'the copy is smaller than the source');
  // perf's modes: kernel addresses stay the user's own (kcore_dir 0700, its files 0400), whatever the umask
  assert.equal(statSync(dest).mode & 0o777, 0o700, 'kcore_dir mode');
  for (const f of ['kallsyms', 'modules', 'kcore']) assert.equal(statSync(join(dest, f)).mode & 0o777, 0o400, f);
});

test('kcore_dir/modules holds the whole text of a procfs file (stat size 0), not a copy by size', (t) => {
  const proc = fakeProc();
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  // /proc/modules reports size 0 like every procfs file; /proc/version stands in for it (this machine has none)
  assert.equal(statSync('/proc/version').size, 0);
  rmSync(join(proc, 'modules'));
  symlinkSync('/proc/version', join(proc, 'modules'));
  const dest = join(proc, 'out', 'kcore_dir');
  copyKcoreDir(dest, proc);
  const text = readFileSync(join(dest, 'modules'), 'utf8');
  assert.ok(text.length > 0);
  assert.equal(text, readFileSync('/proc/version', 'utf8'));
});

test('no modules: only the kernel text window', () => {
  const core = readElfCore((o, n) => makeCore().subarray(o, o + n));
  const plan = planTrim(core, [{ start: STEXT, end: ETEXT }]);
  assert.equal(plan.pieces.length, 1);
  assert.equal(plan.pieces[0]!.vaddr, 0xffffffff80000000n + 16n * 4096n);
  assert.equal(plan.pieces[0]!.srcOffset, BigInt(PAGE + 8 * PAGE + 16 * PAGE));
});

test('malformed cores throw FormatError with the offset', () => {
  const good = makeCore();
  const bad = good.slice();
  bad[0] = 0;
  assert.throws(
    () => readElfCore((o, n) => bad.subarray(o, o + n)),
    (e: unknown) => e instanceof FormatError && e.kind === 'bad-magic' && e.offset === 0,
  );
  const short = good.subarray(0, 64 + 56 * 2);
  assert.throws(
    () => readElfCore((o, n) => short.subarray(o, o + n)),
    (e: unknown) => e instanceof FormatError && e.kind === 'truncated' && e.offset >= 64,
  );
  const notCore = good.slice();
  notCore[16] = 2; // ET_EXEC
  assert.throws(
    () => readElfCore((o, n) => notCore.subarray(o, o + n)),
    (e: unknown) => e instanceof FormatError && e.kind === 'unsupported' && e.offset === 16,
  );
});

test('copyKcoreDir without kcore refuses before creating anything', (t) => {
  const proc = fakeProc();
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  rmSync(join(proc, 'kcore'));
  const dest = join(proc, 'kd');
  assert.throws(() => copyKcoreDir(dest, proc), /kcore does not exist/);
  assert.throws(() => readFileSync(join(dest, 'kallsyms')));
});
