import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { OrderedEvents } from './ordered-events.js';

interface Ev {
  t: number;
  label: string;
}

function q(oe: OrderedEvents<Ev>, ev: Ev): void {
  oe.queue(BigInt(ev.t), 16, ev);
}
const labels = (evs: Ev[]): string[] => evs.map((e) => e.label);

test('replays the PASS n / n+1 / n+2 table of perf session.c', () => {
  const oe = new OrderedEvents<Ev>();
  // PASS n: CPU 0 drained first, then CPU 1 (file order)
  for (const t of [1, 2]) q(oe, { t, label: `${t}@c0` });
  for (const t of [2, 3, 4]) q(oe, { t, label: `${t}@c1` });
  oe.finishedRound();
  // first round: the previous round's max is unknown, so nothing may go out
  assert.deepEqual(oe.drain(), []);

  // PASS n+1
  for (const t of [3, 4, 5]) q(oe, { t, label: `${t}@c0` });
  for (const t of [5, 6, 7]) q(oe, { t, label: `${t}@c1` });
  oe.finishedRound();
  // "Flush every events below timestamp 4" (the max of PASS n), ties in file order
  assert.deepEqual(labels(oe.drain()), ['1@c0', '2@c0', '2@c1', '3@c1', '3@c0', '4@c1', '4@c0']);

  // PASS n+2
  for (const t of [6, 7]) q(oe, { t, label: `${t}@c0` });
  for (const t of [8, 9, 10]) q(oe, { t, label: `${t}@c1` });
  oe.finishedRound();
  // "Flush every events below timestamp 7"
  assert.deepEqual(labels(oe.drain()), ['5@c0', '5@c1', '6@c1', '6@c0', '7@c1', '7@c0']);

  oe.finish();
  assert.deepEqual(labels(oe.drain()), ['8@c1', '9@c1', '10@c1']);
  assert.equal(oe.length, 0);
  assert.equal(oe.queuedBytes, 0);
  assert.equal(oe.stats.unordered, 0);
});

test('equal times keep file order, across rounds too', () => {
  const oe = new OrderedEvents<Ev>();
  q(oe, { t: 5, label: 'a' });
  q(oe, { t: 5, label: 'b' });
  q(oe, { t: 3, label: 'c' });
  oe.finishedRound();
  q(oe, { t: 5, label: 'd' });
  q(oe, { t: 4, label: 'e' });
  oe.finishedRound();
  assert.deepEqual(labels(oe.drain()), ['c', 'e', 'a', 'b', 'd']);
});

test('a record older than what was already delivered is counted as unordered, not lost', () => {
  const oe = new OrderedEvents<Ev>();
  q(oe, { t: 10, label: 'a' });
  oe.finishedRound();
  oe.finishedRound();
  assert.deepEqual(labels(oe.drain()), ['a']);
  q(oe, { t: 5, label: 'late' });
  oe.finish();
  assert.deepEqual(labels(oe.drain()), ['late']);
  assert.equal(oe.stats.unordered, 1);
});

test('HALF flush keeps the queue under its byte budget', () => {
  const budget = 64 * 200; // room for ~100 entries of 16 + 64 bytes
  const oe = new OrderedEvents<Ev>({ maxQueueBytes: budget });
  const out: Ev[] = [];
  for (let i = 0; i < 10_000; i++) {
    q(oe, { t: i, label: String(i) }); // no FINISHED_ROUND at all
    assert.ok(oe.queuedBytes <= budget, `queue grew to ${oe.queuedBytes}`);
    out.push(...oe.drain());
  }
  assert.ok(oe.stats.flushes.half > 0);
  oe.finish();
  out.push(...oe.drain());
  assert.equal(out.length, 10_000);
  assert.deepEqual(
    out.map((e) => e.t),
    Array.from({ length: 10_000 }, (_, i) => i),
  );
});

/**
 * Input model: a global clock, CPUs, and drain times T1 < T2 < …. An event
 * stamped t lands in the pass whose drain follows t, or (written late, after
 * its CPU was drained) in the pass after. That is exactly the invariant perf's
 * two-round rule needs: nothing in pass n+2 is older than pass n's maximum.
 */
const roundsArb = fc
  .array(fc.record({ gap: fc.nat(5), late: fc.boolean(), cpu: fc.nat(3) }), { minLength: 1, maxLength: 300 })
  .chain((evs) => fc.tuple(fc.constant(evs), fc.array(fc.nat(1000), { maxLength: 20 }), fc.nat(1000)));

test('property: output is time-sorted, stable and complete whenever input obeys the round invariant', () => {
  fc.assert(
    fc.property(roundsArb, ([evs, drainSeeds, shuffleSeed]) => {
      let t = 1;
      const stamped = evs.map((e, i) => {
        t += e.gap;
        return { ...e, t, id: i };
      });
      const maxT = t;
      const drains = [...new Set(drainSeeds.map((d) => 1 + Math.floor((d / 1000) * maxT)))].sort((a, b) => a - b);
      drains.push(maxT + 1);
      const passes: (typeof stamped)[] = drains.map(() => []);
      for (const e of stamped) {
        let p = drains.findIndex((d) => d > e.t);
        if (e.late && p + 1 < drains.length) p++;
        passes[p]!.push(e);
      }
      // within one pass the file holds CPU after CPU; shuffle the CPU order per pass
      const oe = new OrderedEvents<{ t: number; id: number; seq: number }>();
      const out: { t: number; id: number; seq: number }[] = [];
      let seq = 0;
      passes.forEach((pass, pi) => {
        const cpus = [0, 1, 2, 3].sort((a, b) => ((a * 7 + pi + shuffleSeed) % 5) - ((b * 7 + pi + shuffleSeed) % 5));
        for (const c of cpus) {
          for (const e of pass.filter((x) => x.cpu === c)) {
            const item = { t: e.t, id: e.id, seq: seq++ };
            oe.queue(BigInt(e.t), 8, item);
          }
        }
        oe.finishedRound();
        out.push(...oe.drain());
      });
      oe.finish();
      out.push(...oe.drain());
      assert.equal(out.length, stamped.length);
      for (let i = 1; i < out.length; i++) {
        const a = out[i - 1]!;
        const b = out[i]!;
        assert.ok(
          a.t < b.t || (a.t === b.t && a.seq < b.seq),
          `out of order at ${i}: ${a.t}/${a.seq} then ${b.t}/${b.seq}`,
        );
      }
      assert.equal(oe.stats.unordered, 0);
    }),
    { numRuns: 300 },
  );
});

test('property check can fail: input breaking the invariant comes out unsorted', () => {
  const oe = new OrderedEvents<Ev>();
  q(oe, { t: 10, label: 'a' });
  oe.finishedRound();
  q(oe, { t: 20, label: 'b' });
  oe.finishedRound(); // delivers a (≤ 10)
  q(oe, { t: 1, label: 'too-late' }); // two rounds late: breaks the invariant
  oe.finish();
  assert.deepEqual(labels(oe.drain()), ['a', 'too-late', 'b']);
  assert.equal(oe.stats.unordered, 1);
});

test('times past 2^32 and 2^53 ns order exactly (the queue compares u32 halves)', () => {
  // a reference: the same round rule on bigints, sorted by (time, file order)
  const base = 2n ** 53n - 3n;
  const times = [base + 5n, 2n ** 32n + 1n, base, 2n ** 32n, base + 1n, 2n ** 64n - 2n, 0xffffffffn, base + 1n];
  const oe = new OrderedEvents<{ t: bigint; i: number }>();
  times.forEach((t, i) => {
    oe.queue(t, 8, { t, i });
  });
  oe.finish();
  const out = oe.drain();
  const want = times.map((t, i) => ({ t, i })).sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.i - b.i));
  assert.deepEqual(out, want);
  // a round delivers up to the previous round's maximum, compared on both halves
  const r = new OrderedEvents<bigint>();
  r.queue(2n ** 40n + 7n, 8, 2n ** 40n + 7n);
  r.finishedRound();
  r.queue(2n ** 40n + 8n, 8, 2n ** 40n + 8n);
  r.queue(2n ** 40n + 6n, 8, 2n ** 40n + 6n);
  r.finishedRound();
  assert.deepEqual(r.drain(), [2n ** 40n + 6n, 2n ** 40n + 7n]);
});

test('a queue past its first 1024 slots grows and compacts without losing or reordering records', () => {
  const oe = new OrderedEvents<number>({ maxQueueBytes: 1 << 30 });
  const out: number[] = [];
  // rounds of 3000 records, each round's times interleaved backwards, so every flush sorts
  for (let r = 0; r < 4; r++) {
    for (let i = 2999; i >= 0; i--) oe.queue(BigInt(r * 3000 + i + 1), 8, r * 3000 + i + 1);
    oe.finishedRound();
    out.push(...oe.drain());
  }
  oe.finish();
  out.push(...oe.drain());
  assert.deepEqual(
    out,
    Array.from({ length: 12000 }, (_, i) => i + 1),
  );
  // HALF flushes (a small budget) deliver in time order too
  const h = new OrderedEvents<number>({ maxQueueBytes: 64 * 100 });
  const got: number[] = [];
  for (let i = 1; i <= 5000; i++) {
    h.queue(BigInt(i), 0, i);
    got.push(...h.drain());
  }
  h.finish();
  got.push(...h.drain());
  assert.ok(h.stats.flushes.half > 0);
  assert.deepEqual(
    got,
    Array.from({ length: 5000 }, (_, i) => i + 1),
  );
});
