import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteText } from '../io/byte-text.js';
import { formatPerfTime, formatPerfTimeTo } from './time-format.js';

// `pokes` writes its times with formatPerfTimeTo: every u64 must print as formatPerfTime, padded.
test('formatPerfTimeTo writes formatPerfTime right-aligned, past 2^53 ns too', () => {
  const u32 = fc.oneof(fc.integer({ min: 0, max: 0x1f_ffff }), fc.integer({ min: 0, max: 0xffffffff }));
  fc.assert(
    fc.property(u32, u32, fc.integer({ min: 0, max: 24 }), (hi, lo, w) => {
      const t = new ByteText(4);
      formatPerfTimeTo(t, hi, lo, w);
      assert.equal(t.toString(), formatPerfTime((BigInt(hi) << 32n) | BigInt(lo)).padStart(w));
    }),
  );
  for (const ns of [0n, 999n, 1000n, 999_999_999n, 1_000_000_000n, (1n << 53n) - 1n, 1n << 53n, (1n << 64n) - 1n]) {
    const t = new ByteText(4);
    formatPerfTimeTo(t, Number(ns >> 32n), Number(ns & 0xffffffffn), 16);
    assert.equal(t.toString(), formatPerfTime(ns).padStart(16), `${ns}`);
  }
});
