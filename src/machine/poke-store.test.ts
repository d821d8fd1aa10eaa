import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Poke } from './poke.js';
import { PokeStore } from './poke-store.js';

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const poke = fc.record({
  time: u64,
  cpu: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 0x7fff }), fc.integer({ min: 0, max: 0xffffffff })),
  addr: u64,
  oldBytes: fc.uint8Array({ maxLength: 300 }),
  newBytes: fc.uint8Array({ maxLength: 300 }),
  fileOffset: fc.oneof(fc.nat(0xffffffff), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
  misc: fc.integer({ min: 0, max: 0xffff }),
  id: fc.option(u64, { nil: undefined }),
});
const plain = (p: Poke) => ({ ...p, oldBytes: [...p.oldBytes], newBytes: [...p.newBytes] });

// The narrow columns widen at the first value past them: every value reads back as added, before and after.
test('a poke store gives back every field as added, whatever widens its columns', () => {
  fc.assert(
    fc.property(fc.array(poke, { maxLength: 40 }), (pokes) => {
      const st = new PokeStore();
      for (const p of pokes) st.add(p);
      assert.equal(st.length, pokes.length);
      for (let i = 0; i < pokes.length; i++) assert.deepEqual(plain(st.peek(i)), plain(pokes[i]!));
    }),
  );
});

test('many distinct ids widen the id index past u8 and u16', () => {
  const st = new PokeStore();
  const n = 70_000;
  for (let i = 0; i < n; i++) st.push(0, i, 0, 0, i, new Uint8Array(1), 0, 1, 0, 0, i, 1, true, 1, i);
  for (const i of [0, 255, 256, 65_535, 65_536, n - 1]) assert.equal(st.idOf(i), (1n << 32n) | BigInt(i));
});
