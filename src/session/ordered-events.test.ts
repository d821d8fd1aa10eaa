import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { OrderedEvents } from './ordered-events.js';

interface Ev {
  t: number;
  label: string;
}

function q(oe: OrderedEvents<Ev>, ev: Ev, off = 0): void {
  oe.queue(BigInt(ev.t), off, 16, ev);
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
            oe.queue(BigInt(e.t), item.seq, 8, item);
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
