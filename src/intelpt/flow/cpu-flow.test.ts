import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { generateProgram } from '../../sim/codegen.js';
import { executeCpu } from '../../sim/executor.js';
import { decodeFlow, type FlowCodeReader, type FlowInput, type FlowPoke } from './decode.js';
import { PtErr, type FlowError, type FlowSink } from './cpu-flow.js';
import { findPsb } from '../packets/raw-decode.js';
import type { TraceSource } from './trace-source.js';

/**
 * The decoder on hostile input: random bytes, and a real simulated trace
 * with bytes flipped, cut or spliced, over the simulated code. It must never
 * throw or hang; corruption shows up as counted trace errors. Decoding
 * through a small window over a trace split into buffers must give exactly
 * what decoding the whole trace at once gives. (Agreement with perf on valid
 * traces is tested in test/experiment.test.ts and test/decode.test.ts.)
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
const clean = executeCpu(prog, { seed: 5, cpu: 0, startTsc: 1000, endTsc: 60_000, flips: [], keepTruth: true });
const timeConv = { shift: 10, mult: 512, zero: 0n };
const ERROR_CODES: number[] = [PtErr.BADPKT, PtErr.NOINSN, PtErr.MISMAT, PtErr.OVR, PtErr.NELOOP];

/** Every sink call as a line, so two decodes can be compared whole. */
function recorder(): { sink: FlowSink; log: string[]; list: FlowError[]; ips: bigint[] } {
  const log: string[] = [];
  const list: FlowError[] = [];
  const ips: bigint[] = [];
  const sink: FlowSink = {
    insns: (cpu, insns, from, to, tsc) => {
      for (let i = from; i < to; i++) ips.push(insns[i]!.ip);
      log.push(`i ${cpu} ${insns[from]?.ip.toString(16)} ${to - from} ${tsc}`);
    },
    branch: (cpu, from, to, kind, tsc) => log.push(`b ${cpu} ${from.toString(16)} ${to.toString(16)} ${kind} ${tsc}`),
    event: (cpu, what, ip, offset) => log.push(`v ${cpu} ${what} ${ip.toString(16)} ${offset}`),
    error: (e) => {
      list.push(e);
      log.push(`e ${JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    },
  };
  return { sink, log, list, ips };
}

/** A trace as buffers cut at `cuts`, with no whole-array view: the decoder must read it through its window. */
function splitTrace(bytes: Uint8Array, cuts: number[]): TraceSource & { reads: number } {
  const bounds = [...new Set([0, ...cuts.map((c) => c % (bytes.length + 1)), bytes.length])].sort((a, b) => a - b);
  const parts = bounds.slice(1).map((end, i) => bytes.slice(bounds[i]!, end));
  const src = {
    size: bytes.length,
    reads: 0,
    read(from: number, into: Uint8Array, at: number, n: number) {
      assert.ok(from >= 0 && n >= 0 && from + n <= bytes.length, `read [${from}, ${from + n}) of ${bytes.length}`);
      src.reads++;
      let pos = 0;
      let dst = at;
      for (const p of parts) {
        const lo = Math.max(from, pos);
        const hi = Math.min(from + n, pos + p.length);
        if (lo < hi) {
          into.set(p.subarray(lo - pos, hi - pos), dst);
          dst += hi - lo;
        }
        pos += p.length;
      }
    },
    close() {},
  };
  return src;
}

function decode(trace: Uint8Array | TraceSource, extra: Partial<FlowInput> = {}) {
  const r = recorder();
  const res = decodeFlow({ cpus: [{ cpu: 0, trace }], pokes: [], code, timeConv, sink: r.sink, ...extra });
  return { ...res, ...r };
}

test('a clean simulated trace decodes with no errors into exactly the executed instructions', () => {
  const r = decode(clean.trace);
  assert.equal(r.errors, 0);
  assert.equal(r.instructions, clean.insns);
  const truth = [...clean.truthOff!].map((o) => prog.base + BigInt(o));
  assert.equal(r.ips.length, truth.length);
  assert.deepEqual(r.ips, truth);
});

/** The error count is the errors reported; each has one of the codes this decoder can find and a packet offset. */
function checkErrors(r: ReturnType<typeof decode>, size: number): void {
  assert.equal(r.errors, r.list.length);
  assert.equal(r.perCpu[0]!.errors, r.errors);
  for (const e of r.list) {
    assert.ok(ERROR_CODES.includes(e.code), `code ${e.code}`);
    assert.ok(e.offset >= -1 && e.offset < size, `offset ${e.offset} of ${size}`);
    assert.ok(e.estTsc >= e.tsc);
  }
}

test('random bytes never throw; every error is counted, with a perf code and an offset inside the trace', () => {
  // After a real PSB+ and a few packets (in sync), so that random bytes are decoded rather than skipped
  const lead = clean.trace.subarray(0, 256);
  let withErrors = 0;
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4096 }), (b) => {
      const t = new Uint8Array([...lead, ...b]);
      const r = decode(t);
      checkErrors(r, t.length);
      if (r.errors) withErrors++;
    }),
    { numRuns: 300 },
  );
  // random bytes hold bad packets and nonsense branches: most inputs must give errors
  assert.ok(withErrors > 150, `${withErrors} of 300 random inputs gave errors`);
});

/** The clean trace with bytes flipped and a range cut out. */
const corrupted = fc
  .tuple(
    fc.array(fc.record({ at: fc.nat(), v: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 20 }),
    fc.nat(),
    fc.nat(),
  )
  .map(([flips, cutA, cutB]) => {
    const t = clean.trace.slice();
    for (const f of flips) t[f.at % t.length] = f.v;
    const a = cutA % t.length;
    const b = a + (cutB % Math.max(1, t.length - a));
    return new Uint8Array([...t.subarray(0, a), ...t.subarray(b)]);
  });

test('corrupted real traces never throw; errors are counted, with perf codes and offsets inside the trace', () => {
  fc.assert(
    fc.property(corrupted, (trace) => checkErrors(decode(trace), trace.length)),
    { numRuns: 150 },
  );
});

/**
 * Pokes at TSC-derived times, each toggling one byte of an executed
 * instruction: where the decoder pauses before a poke decides which code it
 * walks, so a wrong pause point changes the decode.
 */
const pokeAddr = prog.base + BigInt(clean.truthOff![100]!);
function pokesAt(tscs: number[]): { pokes: FlowPoke[]; code: FlowCodeReader } {
  const pokes = tscs
    .map((t) => BigInt(t))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((tsc) => ({ time: (tsc * 512n) >> 10n, addr: pokeAddr, len: 1 }));
  const timed: FlowCodeReader = {
    read(addr, len, time = -1n) {
      const b = code.read(addr, len);
      const flips = pokes.filter((p) => p.time <= time).length;
      if (flips % 2 === 0 || pokeAddr < addr || pokeAddr >= addr + BigInt(b.length)) return b;
      const c = b.slice();
      const at = Number(pokeAddr - addr);
      c[at] = c[at]! ^ 0x41;
      return c;
    },
  };
  return { pokes, code: timed };
}

test('a trace read through a small window, split into buffers, decodes exactly as the whole trace', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.constant(clean.trace), corrupted),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.integer({ min: 1, max: 1500 }),
      fc.array(fc.integer({ min: 1000, max: 60_000 }), { maxLength: 6 }),
      (trace, cuts, window, pokeTscs) => {
        const { pokes, code } = pokesAt(pokeTscs);
        const whole = decode(trace, { pokes, code });
        const src = splitTrace(trace, cuts);
        const windowed = decode(src, { pokes, code, window });
        assert.deepEqual(windowed.log, whole.log);
        assert.equal(windowed.instructions, whole.instructions);
        if (trace.length > 2 * Math.max(window, 64)) assert.ok(src.reads > 1, 'the window was refilled');
      },
    ),
    { numRuns: 120 },
  );
});

test('code that is not there is error 5 (Failed to get instruction); afterUnreadableCode picks the resync', () => {
  const empty: FlowCodeReader = { read: () => new Uint8Array(0) };
  const run = (afterUnreadableCode?: 'next-ip' | 'forget-ip' | 'next-psb') => {
    const list: FlowError[] = [];
    decodeFlow({
      cpus: [{ cpu: 0, trace: clean.trace }],
      pokes: [],
      code: empty,
      sink: { error: (e) => list.push(e) },
      ...(afterUnreadableCode ? { errors: { afterUnreadableCode } } : {}),
    });
    assert.ok(list.length > 0);
    assert.ok(list.every((e) => e.code === PtErr.NOINSN && e.ip !== 0n));
    return list.length;
  };
  let psbs = 0;
  for (let p = findPsb(clean.trace, 0, clean.trace.length); p >= 0; p = findPsb(clean.trace, p + 1, clean.trace.length))
    psbs++;
  const byIp = run();
  const byPsb = run('next-psb');
  // resyncing at the next PSB, at most one error per PSB; at every IP packet, many more
  assert.ok(byPsb <= psbs, `${byPsb} errors, ${psbs} PSBs`);
  assert.ok(byIp > byPsb, `${byIp} errors resyncing at IPs, ${byPsb} at PSBs`);
  assert.equal(run('next-ip'), byIp);
  assert.ok(run('forget-ip') > 0);
});

test('afterMissingPacket: next-psb resumes only at a PSB after a missing-TIP or bad-RET error', () => {
  let seen = 0;
  fc.assert(
    fc.property(corrupted, (trace) => {
      const r = recorder();
      decodeFlow({
        cpus: [{ cpu: 0, trace }],
        pokes: [],
        code,
        timeConv,
        errors: { afterMissingPacket: 'next-psb' },
        sink: r.sink,
      });
      for (let i = 0; i < r.log.length; i++) {
        const line = r.log[i]!;
        if (!line.startsWith('e ') || !/Missing|RET/.test(line)) continue;
        seen++;
        // nothing is decoded between the error and the next PSB
        const next = r.log.slice(i + 1).find((l) => !l.startsWith('e '));
        if (next !== undefined) assert.match(next, /^v 0 psb /);
      }
    }),
    { numRuns: 150 },
  );
  assert.ok(seen > 0, 'no corruption gave a missing-packet error');
});
