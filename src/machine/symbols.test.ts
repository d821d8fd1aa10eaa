import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseKallsyms } from './kallsyms.js';
import { parseModules } from './modules.js';
import { kallsymsTable } from './kallsyms-table.js';
import { readElfCore } from './elf-core.js';
import { writeElfCore } from './elf-core-writer.js';
import { FormatError } from '../io/errors.js';
import fc from 'fast-check';
import { SymbolTable, type KernelSymbol } from './symbols.js';

const K = 0xffffffff81000000n;

test('kallsyms: kernel and module lines, junk skipped', () => {
  const e = parseKallsyms('ffffffff81000000 T _text\nnot a line\nffffffffc0001000 t mod_fn\t[mymod]\n\nzz T bad\n');
  assert.deepEqual(
    e.entries().map((x) => [x.addr, x.type, x.name, x.module]),
    [
      [K, 'T', '_text', undefined],
      [0xffffffffc0001000n, 't', 'mod_fn', 'mymod'],
    ],
  );
});

test('modules: name, size, address', () => {
  const m = parseModules(
    'e1000 167936 0 - Live 0xffffffffc0340000\nkvm 1142784 1 kvm_intel, Live 0xffffffffc0a00000 (O)\n',
  );
  assert.deepEqual(
    m.map((x) => [x.name, x.size, x.addr]),
    [
      ['e1000', 167936, 0xffffffffc0340000n],
      ['kvm', 1142784, 0xffffffffc0a00000n],
    ],
  );
});

test('symbols follow perf: filtered types, duplicates, ends, clipping to the kcore map', () => {
  const text = [
    `${K.toString(16)} T _text`,
    `${K.toString(16)} T startup_64`, // duplicate: the last one at an address has the length, so it wins
    `${(K + 0x100n).toString(16)} W weak_one`,
    `${(K + 0x100n).toString(16)} T strong_one`,
    `${(K + 0x200n).toString(16)} r rodata_skipped`,
    `${(K + 0x300n).toString(16)} T last`,
    `ffffffffc0000000 t m1\t[mod]`,
  ].join('\n');
  const maps = [
    { start: K, end: K + 0x1800n },
    { start: 0xffffffffc0000000n, end: 0xffffffffc0001000n },
  ];
  const s = kallsymsTable(parseKallsyms(text), maps);
  assert.equal(s.symOff(K + 5n), 'startup_64+0x5');
  assert.equal(s.symOff(K + 0x100n), 'strong_one+0x0');
  assert.equal(s.symOff(K + 0x250n), 'strong_one+0x150', 'the r symbol is dropped, so strong_one runs to last');
  // last kernel symbol before a module one: ends at the next page after its start, then clipped to the map
  assert.equal(s.symOff(K + 0x17ffn), 'last+0x14ff');
  assert.equal(s.symOff(K + 0x1800n), '');
  assert.equal(s.symOff(0xffffffffc0000fffn), 'm1+0xfff', 'last symbol ends a page after its start');
  assert.equal(s.symOff(K - 1n), '');
});

test('ELF core: write → read round trip; malformed input throws FormatError', () => {
  const a = Uint8Array.from({ length: 5000 }, (_, i) => i & 0xff);
  const b = Uint8Array.of(1, 2, 3);
  for (const le of [true, false]) {
    const f = writeElfCore(
      [
        { vaddr: 0xffffffffc0000000n, bytes: b },
        { vaddr: K, bytes: a },
      ],
      { le },
    );
    const segs = readElfCore(f);
    assert.deepEqual(
      segs.map((s) => [s.vaddr, [...s.bytes]]),
      [
        [K, [...a]],
        [0xffffffffc0000000n, [...b]],
      ],
    );
  }
  const f = writeElfCore([{ vaddr: K, bytes: a }]);
  assert.throws(
    () => readElfCore(f.subarray(0, 100), 'kcore'),
    (e: unknown) => e instanceof FormatError && e.kind === 'truncated' && /kcore: at offset 0x40/.test(e.message),
  );
  assert.throws(
    () => readElfCore(f.subarray(0, 4096 + 10)),
    (e: unknown) => e instanceof FormatError && e.kind === 'bad-size',
  );
  assert.throws(
    () => readElfCore(Uint8Array.of(1, 2, 3)),
    (e: unknown) => e instanceof FormatError && e.kind === 'bad-magic',
  );
  const bad = f.slice();
  bad[4] = 1; // ELFCLASS32
  assert.throws(
    () => readElfCore(bad),
    (e: unknown) => e instanceof FormatError && e.kind === 'unsupported',
  );
});

test('SymbolTable.columns finds what SymbolTable.of finds (the same symbols, one object per symbol)', () => {
  const addr = fc.oneof(
    fc.bigInt({ min: 0n, max: 0x3000n }),
    fc.bigInt({ min: 0xfffffffe_00000000n, max: 0xfffffffe_00003000n }),
    fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(addr, fc.bigInt({ min: 0n, max: 0x900n }), fc.boolean()), { maxLength: 40 }),
      fc.array(addr, { maxLength: 40 }),
      (raw, probes) => {
        // sorted by start, non-overlapping (ends may reach 2^64), some zero-length, some in a module
        const syms: KernelSymbol[] = [];
        let floor = 0n;
        for (const [a, len, mod] of [...raw].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))) {
          if (a < floor) continue;
          const end = a + len > 1n << 64n ? 1n << 64n : a + len;
          syms.push({ start: a, end, name: `s${syms.length}`, ...(mod ? { module: 'm' } : {}) });
          floor = end === a ? a + 1n : end;
        }
        const list = SymbolTable.of(syms);
        const cols = SymbolTable.columns(syms);
        assert.equal(cols.length, list.length);
        for (let i = 0; i < syms.length; i++) {
          assert.deepEqual(cols.symbolAt(i), list.symbolAt(i));
          assert.equal(cols.symbolAt(i), cols.symbolAt(i));
        }
        for (const p of [...probes, ...syms.flatMap((s) => [s.start, s.end, s.end - 1n, s.start - 1n])]) {
          const want = list.find(p);
          assert.deepEqual(cols.find(p), want, `0x${p.toString(16)}`);
          if (want) assert.equal(cols.find(p), cols.symbolAt(syms.indexOf(want)));
        }
      },
    ),
  );
});

test('SymbolTable.columns keeps UTF-8 names and modules, and findName finds as the list does', () => {
  const syms: KernelSymbol[] = [
    { start: 0x10n, end: 0x20n, name: 'ä::b()' },
    { start: 0x20n, end: 0x20n, name: '' },
    { start: 0x30n, end: 0x40n, name: 'x', module: 'm' },
    { start: 0x40n, end: 0x50n, name: 'x' },
    { start: 0x50n, end: 0x60n, name: '日本' },
  ];
  const cols = SymbolTable.columns(syms);
  const list = SymbolTable.of(syms);
  for (const n of ['ä::b()', '', 'x', '日本', 'y'])
    for (const k of [false, true]) assert.deepEqual(cols.findName(n, k), list.findName(n, k), `${n} ${k}`);
  assert.deepEqual(cols.find(0x55n), syms[4]);
  assert.deepEqual(cols.find(0x20n), syms[1]);
});
