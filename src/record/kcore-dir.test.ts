/**
 * kcore trimming on a synthetic ELF64 core (this machine has no /proc/kcore):
 * a fake /proc with kcore, kallsyms and modules; the trimmed copy is checked
 * with binutils' readelf and byte by byte against the source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ByteWriter } from '../io/byte-writer.js';
import { FormatError } from '../io/errors.js';
import { copyKcoreDir, planTrim, readElfCore } from './kcore-dir.js';

const PAGE = 4096;
// Three PT_LOADs like x86-64 kcore: direct map, kernel text mapping, module area.
const SEGS = [
  { vaddr: 0xffff888000000000n, pages: 8 },
  { vaddr: 0xffffffff80000000n, pages: 64 },
  { vaddr: 0xffffffffa0000000n, pages: 32 },
];
// Kernel text from _stext (page 16 + 0x123) to _etext (page 40 + 0x10) of the text segment;
// modules from page 4 + 0x80 to page 9 + 0x200 of the module area.
const STEXT = 0xffffffff80000000n + 16n * 4096n + 0x123n;
const ETEXT = 0xffffffff80000000n + 40n * 4096n + 0x10n;
const MOD_A = 0xffffffffa0000000n + 4n * 4096n + 0x80n;
const MOD_B = 0xffffffffa0000000n + 7n * 4096n;
const MOD_B_SIZE = 2n * 4096n + 0x200n; // ends inside page 9

/** Byte at (segment k, offset o): a pattern that differs per page and segment. */
const pat = (k: number, o: number): number => (k * 71 + Math.floor(o / PAGE) * 13 + (o % 251)) & 0xff;

function makeCore(): Uint8Array {
  const phnum = SEGS.length + 1; // + a PT_NOTE, which the copy must drop
  const w = new ByteWriter(true, 1 << 20);
  w.bytes(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0])).zeros(8);
  w.u16(4).u16(62).u32(1).u64(0n).u64(64).u64(0n).u32(0).u16(64).u16(56).u16(phnum).u16(64).u16(0).u16(0);
  const noteOff = 64 + 56 * phnum;
  w.u32(4).u32(0).u64(noteOff).u64(0n).u64(0n).u64(16).u64(0n).u64(0n); // PT_NOTE
  let off = PAGE;
  for (const s of SEGS) {
    w.u32(1).u32(7).u64(off).u64(s.vaddr).u64(0n).u64(s.pages * PAGE).u64(s.pages * PAGE).u64(PAGE);
    off += s.pages * PAGE;
  }
  w.zeros(16); // note body
  w.alignTo(PAGE);
  SEGS.forEach((s, k) => {
    const b = new Uint8Array(s.pages * PAGE);
    for (let o = 0; o < b.length; o++) b[o] = pat(k, o);
    w.bytes(b);
  });
  return w.finish().slice();
}

function fakeProc(): string {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-kcore-'));
  writeFileSync(join(dir, 'kcore'), makeCore());
  const hex = (v: bigint): string => v.toString(16).padStart(16, '0');
  writeFileSync(join(dir, 'kallsyms'), [`${hex(STEXT)} T _stext`, `${hex(STEXT)} T _text`, `${hex(STEXT + 0x40n)} T start_kernel`, `${hex(ETEXT)} T _etext`, ''].join('\n'));
  writeFileSync(join(dir, 'modules'), [`mod_b ${MOD_B_SIZE} 0 - Live 0x${hex(MOD_B)}`, `mod_a 4096 1 - Live 0x${hex(MOD_A)}`, ''].join('\n'));
  return dir;
}

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
    const loads = [...re.stdout.matchAll(/^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)/gm)];
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
  assert.throws(() => readElfCore((o, n) => bad.subarray(o, o + n)), (e: unknown) => e instanceof FormatError && e.kind === 'bad-magic' && e.offset === 0);
  const short = good.subarray(0, 64 + 56 * 2);
  assert.throws(() => readElfCore((o, n) => short.subarray(o, o + n)), (e: unknown) => e instanceof FormatError && e.kind === 'truncated' && e.offset >= 64);
  const notCore = good.slice();
  notCore[16] = 2; // ET_EXEC
  assert.throws(() => readElfCore((o, n) => notCore.subarray(o, o + n)), (e: unknown) => e instanceof FormatError && e.kind === 'unsupported' && e.offset === 16);
});

test('copyKcoreDir without kcore refuses before creating anything', (t) => {
  const proc = fakeProc();
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  rmSync(join(proc, 'kcore'));
  const dest = join(proc, 'kd');
  assert.throws(() => copyKcoreDir(dest, proc), /kcore does not exist/);
  assert.throws(() => readFileSync(join(dest, 'kallsyms')));
});
