import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteText } from './byte-text.js';
import { copyView, viewOf } from './byte-copy.js';

test('copyFrom / copyView: any length and offsets, the bytes around untouched', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(9), fc.nat(9), (src, pre, at) => {
      const from = new Uint8Array(pre + src.length);
      from.set(src, pre);
      const to = new Uint8Array(at + src.length + 3).fill(0xee);
      copyView(viewOf(to), at, viewOf(from), pre, src.length);
      assert.deepEqual(to.subarray(at, at + src.length), src);
      assert.ok(to.subarray(0, at).every((b) => b === 0xee));
      assert.ok(to.subarray(at + src.length).every((b) => b === 0xee));
      const t = new ByteText(2);
      t.str('x');
      t.copyFrom(viewOf(from), pre, src.length);
      assert.deepEqual(new Uint8Array(t.view()), new Uint8Array([0x78, ...src]));
    }),
  );
});
