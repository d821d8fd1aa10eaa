import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LastIp } from './last-ip.js';

// updateHalves (the flow decoder's path, on numbers) must give the IP update() gives on bigints,
// whatever the sequence of compressions, and after writes to `ip` from outside (a PSB's reset).
test('LastIp.updateHalves equals update on any sequence of IP packets', () => {
  const step = fc.record({
    ipc: fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 7),
    hi: fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffffffff })),
    lo: fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffffffff })),
    reset: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const a = new LastIp();
      const b = new LastIp();
      for (const s of steps) {
        // the payload as the raw decoder gives it: only the bytes the compression carries
        const hi = s.ipc === 1 || s.ipc === 2 ? 0 : s.ipc === 3 || s.ipc === 4 ? s.hi & 0xffff : s.hi;
        const lo = s.ipc === 1 ? s.lo & 0xffff : s.lo;
        if (s.reset) {
          a.reset();
          b.ip = 0n; // a write from outside, as the flow decoder's PSB handling does
          b.haveIp = false;
          b.suppressed = false;
        }
        const ra = a.update(s.ipc, (BigInt(hi) << 32n) | BigInt(lo));
        const rb = b.updateHalves(s.ipc, hi, lo);
        assert.equal(rb, ra);
        assert.equal(b.ip, a.ip);
        assert.equal(b.haveIp, a.haveIp);
        assert.equal(b.suppressed, a.suppressed);
      }
    }),
  );
});
