import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CodeImage } from './code-image.js';
import type { Poke } from './poke.js';
import { PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_USER } from '../abi/record-type.js';

const A = 0xffffffff81001000n;
const NOP5 = [0x0f, 0x1f, 0x44, 0x00, 0x00];
const JMP5 = [0xe9, 0x10, 0x00, 0x00, 0x00];

let off = 0;
function poke(time: bigint, addr: bigint, oldB: number[], newB: number[], extra: Partial<Poke> = {}): Poke {
  off += 64;
  return {
    time,
    cpu: 0,
    addr,
    oldBytes: Uint8Array.from(oldB),
    newBytes: Uint8Array.from(newB),
    fileOffset: off,
    misc: PERF_RECORD_MISC_KERNEL,
    ...extra,
  };
}
const seg = (vaddr: bigint, bytes: number[]) => ({ vaddr, bytes: Uint8Array.from(bytes), flags: 7 });
const arr = (u: Uint8Array) => [...u];

test('forwards and backwards over a jump label flipping twice', () => {
  const base = [0x55, ...NOP5, 0xc3];
  const img = CodeImage.build([seg(A - 1n, base)], [poke(200n, A, JMP5, NOP5), poke(100n, A, NOP5, JMP5)]);
  assert.deepEqual(arr(img.read(A, 5, 99n)), NOP5);
  assert.deepEqual(arr(img.read(A, 5, 100n)), JMP5, 'the new bytes apply at the poke time itself');
  assert.deepEqual(arr(img.read(A, 5, 199n)), JMP5);
  assert.deepEqual(arr(img.read(A, 5, 200n)), NOP5);
  assert.deepEqual(arr(img.read(A, 5, 150n)), JMP5, 'back in time after a later query');
  assert.deepEqual(arr(img.read(A - 1n, 7, 150n)), [0x55, ...JMP5, 0xc3]);
  assert.deepEqual(arr(img.read(A - 1n, 100, 150n)), [0x55, ...JMP5, 0xc3], 'clipped to the segment');
  assert.equal(img.read(A + 100n, 4).length, 0);
  assert.ok(img.pokes.every((p) => p.consistent));
});

test('without kcore the pokes define the bytes they cover, old bytes before the first', () => {
  const img = CodeImage.build([], [poke(10n, A, NOP5, JMP5)]);
  assert.deepEqual(arr(img.read(A, 5, 9n)), NOP5);
  assert.deepEqual(arr(img.read(A, 5, 10n)), JMP5);
  assert.equal(img.read(A - 1n, 3, 10n).length, 0, 'nothing before the poked range');
  assert.deepEqual(arr(img.read(A + 3n, 10, 10n)), [0, 0], 'stops after the poked range');
});

test('pokes with the same timestamp apply in file order, not input order', () => {
  const first = poke(50n, A, NOP5, JMP5, { fileOffset: 1000 });
  const second = poke(50n, A, JMP5, [0xe9, 0x20, 0, 0, 0], { fileOffset: 2000 });
  const img = CodeImage.build([seg(A, NOP5)], [second, first]);
  assert.deepEqual(arr(img.read(A, 5, 50n)), [0xe9, 0x20, 0, 0, 0]);
  assert.deepEqual(arr(img.read(A, 5, 49n)), NOP5);
  assert.deepEqual(
    img.pokes.map((p) => p.poke.fileOffset),
    [1000, 2000],
  );
  assert.ok(
    img.pokes.every((p) => p.consistent),
    'the second sees the first applied',
  );
  // swap the file order: now the "second" comes first and disagrees
  const img2 = CodeImage.build([seg(A, NOP5)], [{ ...second, fileOffset: 10 }, first]);
  assert.deepEqual(
    img2.pokes.map((p) => p.consistent),
    [false, false],
  );
});

test('trampolines exist only between creation and removal', () => {
  const T = 0xffffffffc0100000n;
  const code = [0x55, 0x48, 0x89, 0xe5, 0xc3];
  const img = CodeImage.build(
    [],
    [
      poke(10n, T, [], code),
      poke(20n, T + 3n, [0xe5, 0xc3], [0xe5, 0x90]),
      poke(30n, T, [0x55, 0x48, 0x89, 0xe5, 0x90], []),
    ],
  );
  assert.equal(img.read(T, 5, 9n).length, 0);
  assert.deepEqual(arr(img.read(T, 5, 10n)), code);
  assert.deepEqual(arr(img.read(T, 5, 25n)), [0x55, 0x48, 0x89, 0xe5, 0x90]);
  assert.equal(img.read(T, 5, 30n).length, 0);
  assert.ok(img.pokes.every((p) => p.consistent));
});

test('non-kernel pokes are not applied (perf ignores them)', () => {
  const img = CodeImage.build([seg(A, NOP5)], [poke(10n, A, NOP5, JMP5, { misc: PERF_RECORD_MISC_USER })]);
  assert.deepEqual(arr(img.read(A, 5)), NOP5);
  assert.equal(img.ignoredPokes.length, 1);
});

test('pokesIn selects by range and time', () => {
  const pk = [poke(10n, A, NOP5, JMP5), poke(20n, A, JMP5, NOP5), poke(15n, A + 0x100n, [0x66, 0x90], [0xeb, 0x03])];
  const img = CodeImage.build([], pk);
  assert.deepEqual(
    img.pokesIn(A, A + 0x200n).map((p) => p.poke.time),
    [10n, 15n, 20n],
  );
  assert.deepEqual(
    img.pokesIn(A + 4n, A + 5n, 11n, 30n).map((p) => p.poke.time),
    [20n],
  );
  assert.deepEqual(img.pokesIn(A + 5n, A + 0x100n).length, 0);
  assert.deepEqual(
    img.pokesIn(A + 0x101n, A + 0x102n, 0n, 15n).map((p) => p.poke.time),
    [15n],
  );
});

/**
 * Reference model: replay from the start, byte by byte. A byte not in the
 * base takes the old byte of the first poke covering it, or does not exist
 * when that poke only writes it.
 */
function replay(base: Map<bigint, number>, pokes: Poke[], addr: bigint, len: number, t: bigint): (number | null)[] {
  const order = [...pokes].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset));
  const mem = new Map<bigint, number | null>(base);
  for (const p of order) {
    const span = Math.max(p.oldBytes.length, p.newBytes.length);
    for (let j = 0; j < span; j++) {
      const a = p.addr + BigInt(j);
      if (!mem.has(a)) mem.set(a, j < p.oldBytes.length ? p.oldBytes[j]! : null);
    }
  }
  for (const p of order) {
    if (p.time > t) break;
    for (let j = 0; j < p.newBytes.length; j++) mem.set(p.addr + BigInt(j), p.newBytes[j]!);
    for (let j = p.newBytes.length; j < p.oldBytes.length; j++) mem.set(p.addr + BigInt(j), null);
  }
  const out: (number | null)[] = [];
  for (let j = 0; j < len; j++) out.push(mem.get(addr + BigInt(j)) ?? null);
  return out;
}

test('bytesAt equals a full replay for random overlapping pokes of mixed lengths (property)', () => {
  const pokeArb = fc.record({
    time: fc.integer({ min: 0, max: 20 }),
    at: fc.integer({ min: 0, max: 24 }),
    oldLen: fc.integer({ min: 0, max: 6 }),
    newLen: fc.integer({ min: 0, max: 6 }),
    seed: fc.integer({ min: 0, max: 255 }),
    fileOffset: fc.integer({ min: 0, max: 1000 }),
  });
  fc.assert(
    fc.property(
      fc.array(pokeArb, { maxLength: 12 }),
      fc.boolean(),
      fc.integer({ min: -1, max: 21 }),
      fc.integer({ min: -2, max: 30 }),
      fc.integer({ min: 1, max: 36 }),
      (ps, withBase, qt, qa, ql) => {
        const pokes: Poke[] = ps
          .filter((p) => p.oldLen + p.newLen > 0)
          .map((p, i) => ({
            time: BigInt(p.time),
            cpu: 0,
            addr: A + BigInt(p.at),
            oldBytes: Uint8Array.from({ length: p.oldLen }, (_, j) => (p.seed + j) & 0xff),
            newBytes: Uint8Array.from({ length: p.newLen }, (_, j) => (p.seed * 7 + j + 1) & 0xff),
            fileOffset: p.fileOffset * 100 + i,
            misc: PERF_RECORD_MISC_KERNEL,
          }));
        const baseBytes = Array.from({ length: 16 }, (_, j) => 0xa0 + j);
        const segs = withBase ? [seg(A + 4n, baseBytes)] : [];
        const base = new Map<bigint, number>();
        if (withBase)
          baseBytes.forEach((b, j) => {
            base.set(A + 4n + BigInt(j), b);
          });
        const img = CodeImage.build(segs, pokes);
        const got = img.bytesAt(A - 2n, 36, BigInt(qt));
        const want = replay(base, pokes, A - 2n, 36, BigInt(qt));
        const gotArr = arr(got.bytes).map((b, j) => (got.live[j] ? b : null));
        assert.deepEqual(gotArr, want);
        // read() is the longest existing prefix of the same bytes
        const r = arr(img.read(A - 2n, 36, BigInt(qt)));
        const firstGap = want.indexOf(null);
        assert.deepEqual(r, want.slice(0, firstGap < 0 ? 36 : firstGap));
        // and at a random address and length (reads inside, across and past the kcore segment)
        const want2 = replay(base, pokes, A + BigInt(qa), ql, BigInt(qt));
        const gap2 = want2.indexOf(null);
        assert.deepEqual(arr(img.read(A + BigInt(qa), ql, BigInt(qt))), want2.slice(0, gap2 < 0 ? ql : gap2));
      },
    ),
    { numRuns: 1000 },
  );
});

test('times beyond 2^53 ns stay exact (doubles only narrow the search)', () => {
  const B = 1n << 60n;
  const img = CodeImage.build([seg(A, NOP5)], [poke(B + 1n, A, NOP5, JMP5), poke(B + 3n, A, JMP5, NOP5)]);
  assert.equal(Number(B + 1n), Number(B + 3n), 'the two times round to one double');
  assert.deepEqual(arr(img.read(A, 5, B)), NOP5);
  assert.deepEqual(arr(img.read(A, 5, B + 1n)), JMP5);
  assert.deepEqual(arr(img.read(A, 5, B + 2n)), JMP5);
  assert.deepEqual(arr(img.read(A, 5, B + 3n)), NOP5);
});

test('a crafted pile of long overlapping pokes is refused, not allocated', () => {
  const big = new Uint8Array(65535);
  const pokes: Poke[] = [];
  for (let i = 0; i < 20000; i++)
    pokes.push({
      time: BigInt(i),
      cpu: 0,
      addr: A + BigInt(i * 16),
      oldBytes: big,
      newBytes: big,
      fileOffset: 4096 + i * 64,
      misc: PERF_RECORD_MISC_KERNEL,
    });
  assert.throws(
    () => CodeImage.build([], pokes),
    (e: unknown) =>
      e instanceof Error &&
      e.name === 'FormatError' &&
      /at offset 0x1000: TEXT_POKE \(20\): unsupported 20000 pokes/.test(e.message),
  );
});
