import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { generateProgram } from '../../sim/codegen.js';
import { executeCpu } from '../../sim/executor.js';
import { decodeFlow, type FlowCodeReader } from './decode.js';
import type { FlowError } from './cpu-flow.js';

/**
 * The decoder on hostile input: random bytes, and a real simulated trace
 * with bytes flipped, cut or spliced, over the simulated code. It must never
 * throw or hang; corruption shows up as counted trace errors. (Agreement
 * with perf on valid traces is tested in test/experiment.test.ts.)
 */
const prog = generateProgram({ seed: 5, sites: 8 });
const code: FlowCodeReader = {
  read(addr, len) {
    const off = addr - prog.base;
    if (off < 0n || off >= BigInt(prog.code.length)) return new Uint8Array(0);
    const o = Number(off);
    return prog.code.subarray(o, Math.min(prog.code.length, o + len));
  },
};
const clean = executeCpu(prog, { seed: 5, cpu: 0, startTsc: 1000, endTsc: 60_000, flips: [] });

function decode(trace: Uint8Array): { errors: number; instructions: number; list: FlowError[] } {
  const list: FlowError[] = [];
  const r = decodeFlow({
    cpus: [{ cpu: 0, trace }],
    pokes: [],
    code,
    timeConv: { shift: 10, mult: 512, zero: 0n },
    sink: { error: (e) => list.push(e) },
  });
  return { errors: r.errors, instructions: r.instructions, list };
}

test('a clean simulated trace decodes with no errors and every executed instruction', () => {
  const r = decode(clean.trace);
  assert.equal(r.errors, 0);
  assert.equal(r.instructions, clean.insns);
});

test('random bytes never throw', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4096 }), (b) => {
      const r = decode(b);
      assert.ok(r.errors >= 0);
    }),
    { numRuns: 300 },
  );
});

test('corrupted real traces never throw; errors carry offsets inside the trace and perf codes', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ at: fc.nat(), v: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 20 }),
      fc.nat(),
      fc.nat(),
      (flips, cutA, cutB) => {
        const t = clean.trace.slice();
        for (const f of flips) t[f.at % t.length] = f.v;
        const a = cutA % t.length;
        const b = a + (cutB % Math.max(1, t.length - a));
        const spliced = new Uint8Array([...t.subarray(0, a), ...t.subarray(b)]);
        for (const trace of [t, spliced]) {
          const r = decode(trace);
          for (const e of r.list) {
            assert.ok(e.offset >= -1 && e.offset < trace.length, `offset ${e.offset}`);
            assert.ok([3, 5, 6, 7, 10].includes(e.code), `code ${e.code}`);
          }
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('code that is not there is an error (5: Failed to get instruction), not a crash', () => {
  const empty: FlowCodeReader = { read: () => new Uint8Array(0) };
  const list: FlowError[] = [];
  decodeFlow({ cpus: [{ cpu: 0, trace: clean.trace }], pokes: [], code: empty, sink: { error: (e) => list.push(e) } });
  assert.ok(list.length > 0);
  assert.ok(list.every((e) => e.code === 5));
});
