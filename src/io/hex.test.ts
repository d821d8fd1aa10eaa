import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hexToBigInt } from './hex.js';

test('hexToBigInt equals BigInt("0x…") for every 1- to 16-digit hex string, either case', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.nat(15), fc.boolean(), (v, pad, upper) => {
      let hex = v.toString(16).padStart(Math.min(16, v.toString(16).length + pad), '0');
      if (upper) hex = hex.toUpperCase();
      assert.equal(hexToBigInt(hex), BigInt(`0x${hex}`));
    }),
  );
  assert.equal(hexToBigInt('0'), 0n);
  assert.equal(hexToBigInt('ffffffffffffffff'), (1n << 64n) - 1n);
});
