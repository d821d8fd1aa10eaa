import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { generateProgram } from '../../sim/codegen.js';
import { executeCpu } from '../../sim/executor.js';
import { BlockCache } from '../../x86/block-cache.js';
import { PacketCursor } from '../packets/cursor.js';
import { PT } from '../packets/kinds.js';
import { PacketEncoder } from '../packet-encoder.js';
import { decodeFlow, type FlowCodeReader, type FlowPoke } from './decode.js';
import type { FlowError, FlowSink } from './cpu-flow.js';
import { cachedPattern, walkPattern } from './tnt-patterns.js';

/**
 * TNT patterns (tnt-patterns.ts) must change nothing but speed: decoding a
 * trace with them gives the errors (code, IP, times, offsets) and
 * instruction counts of the walk bit by bit, on random TNT bits (most runs
 * go astray: wrong-way branches, returns on 0 bits or with nothing on the
 * stack, indirect branches with no TIP) and with text pokes between, which
 * must void the patterns made before.
 */
const prog = generateProgram({ seed: 9, sites: 8 });
const code: FlowCodeReader = {
  read(addr, len) {
    const off = addr - prog.base;
    if (off < 0n || off >= BigInt(prog.code.length)) return new Uint8Array(0);
    const o = Number(off);
    return prog.code.subarray(o, Math.min(prog.code.length, o + len));
  },
};
const clean = executeCpu(prog, { seed: 9, cpu: 0, startTsc: 1000, endTsc: 60_000, flips: [], keepTruth: true });
const timeConv = { shift: 10, mult: 512, zero: 0n };

/** Offsets of the trace's TNT8 packets. */
const tnts: number[] = [];
{
  const c = new PacketCursor(clean.trace, { start: 0, end: clean.trace.length, dialect: 'perf' });
  while (!c.atEnd && c.next() > 0) if (c.raw.type === PT.TNT8) tnts.push(c.last);
}

/** The trace with the bits of some TNT8 packets replaced (their bit counts kept). */
function withBits(changes: { at: number; bits: number }[]): Uint8Array {
  const t = clean.trace.slice();
  for (const ch of changes) {
    const o = tnts[ch.at % tnts.length]!;
    const x = t[o]!;
    const stop = 31 - Math.clz32(x);
    t[o] = (1 << stop) | (ch.bits & ((1 << stop) - 2));
  }
  return t;
}

/** Pokes toggling a byte of an executed instruction (the code image changes at each). */
const pokeAddr = prog.base + BigInt(clean.truthOff![300]!);
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

const show = (e: FlowError): string => JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

function decode(trace: Uint8Array, pokeTscs: number[], sink: 'quiet' | 'walk' | 'branches') {
  const { pokes, code: timed } = pokesAt(pokeTscs);
  const errors: string[] = [];
  const s: FlowSink = { error: (e) => errors.push(show(e)) };
  if (sink !== 'branches') s.walkQuiet = true;
  else s.branch = () => {};
  const r = decodeFlow({
    cpus: [{ cpu: 0, trace }],
    pokes,
    code: timed,
    timeConv,
    sink: s,
    tntPatterns: sink === 'quiet',
  });
  return { errors, instructions: r.instructions };
}

test('TNT patterns decode as the walk bit by bit: random TNT bits, pokes between', () => {
  assert.ok(tnts.length > 100, `${tnts.length} TNT8 packets`);
  let withErrors = 0;
  fc.assert(
    fc.property(
      fc.array(fc.record({ at: fc.nat(), bits: fc.nat(255) }), { maxLength: 40 }),
      fc.array(fc.integer({ min: 1000, max: 60_000 }), { maxLength: 6 }),
      (changes, pokeTscs) => {
        const trace = withBits(changes);
        const quiet = decode(trace, pokeTscs, 'quiet');
        const walk = decode(trace, pokeTscs, 'walk');
        const branches = decode(trace, pokeTscs, 'branches');
        assert.deepEqual(quiet, walk);
        assert.deepEqual(quiet, branches);
        if (quiet.errors.length) withErrors++;
      },
    ),
    { numRuns: 150 },
  );
  // the random bits must send walks astray, or the errors' agreement says little
  assert.ok(withErrors > 50, `${withErrors} of 150 runs with errors`);
});

test('a pattern is the walk of its bits; a cached one is voided by a dropped block', () => {
  const cache = new BlockCache((addr, len) => {
    const b = code.read(addr, len);
    return b.length ? b : undefined;
  });
  const starts = [...new Set(clean.truthOff!.slice(0, 5000))].map((o) => prog.base + BigInt(o));
  fc.assert(
    fc.property(fc.nat(), fc.nat(255), fc.integer({ min: 1, max: 8 }), (i, bits, k) => {
      const start = cache.get(starts[i % starts.length]!);
      const b = bits & ((1 << k) - 1);
      const fresh = walkPattern(cache, start, b, k);
      assert.deepEqual(cachedPattern(cache, cache.epoch, start, b, k), fresh);
      assert.ok(fresh.bits <= k);
      if (fresh.last) {
        const op = fresh.last.insns[fresh.last.insns.length - 1]!.op;
        assert.ok(op === 'jcc' || op === 'ret', op);
      }
      // dropping the pattern's last block moves the epoch: the pattern is made again, from the new blocks
      if (fresh.last) {
        cache.invalidate(fresh.last.start, fresh.last.end);
        const again = cachedPattern(cache, cache.epoch, cache.get(start.start), b, k);
        assert.notEqual(again.last, fresh.last);
        assert.deepEqual(again.insns, fresh.insns);
      }
    }),
    { numRuns: 300 },
  );
});

/**
 * Random code of 16-byte slots (nops, then a jcc, call, jmp, ret or indirect jmp to a random slot), a
 * random TNT stream over it with TIPs and TSCs, and pokes that turn a call into a jmp or a jcc into a jmp
 * (same length, other TNT and stack effects): patterns made before a poke must not be replayed after it.
 */
const BASE = 0xffffffff81000000n;
const SLOTS = 16;
const slot = fc.record({ nops: fc.nat(8), kind: fc.nat(9), to: fc.nat(SLOTS - 1) });

function randomCode(slots: { nops: number; kind: number; to: number }[]): Uint8Array {
  const c = new Uint8Array(slots.length * 16).fill(0x90);
  slots.forEach((s, i) => {
    const p = i * 16 + s.nops;
    const rel = (len: number): number => s.to * 16 - (p + len);
    const put32 = (at: number, v: number) => new DataView(c.buffer).setInt32(at, v, true);
    if (s.kind < 4) {
      c.set([0x0f, 0x84], p); // jz rel32
      put32(p + 2, rel(6));
    } else if (s.kind < 6) {
      c[p] = 0xe8; // call rel32
      put32(p + 1, rel(5));
    } else if (s.kind < 7) {
      c[p] = 0xe9; // jmp rel32
      put32(p + 1, rel(5));
    } else if (s.kind < 9) c[p] = 0xc3;
    else c.set([0xff, 0xe0], p); // jmp rax: a TIP must say where
  });
  return c;
}

/** The code with each poke applied once its time has come: the opcode at `addr` turned into a jmp. */
function pokedCode(bytes: Uint8Array, pokes: FlowPoke[]): FlowCodeReader {
  return {
    read(addr, len, time = -1n) {
      const off = addr - BASE;
      if (off < 0n || off >= BigInt(bytes.length)) return new Uint8Array(0);
      const o = Number(off);
      const c = bytes.slice(o, Math.min(bytes.length, o + len));
      for (const p of pokes) {
        if (p.time > time) continue;
        const at = Number(p.addr - BASE) - o;
        if (at < 0 || at >= c.length) continue;
        // call rel32 → jmp rel32; jz rel32 (0f 84) → nop, jmp rel32 (the rel32 shifted by the nop)
        if (c[at] === 0xe8) c[at] = 0xe9;
        else if (c[at] === 0x0f && at + 5 < c.length) {
          const v = new DataView(c.buffer, c.byteOffset).getInt32(at + 2, true) + 1;
          c[at] = 0x90;
          c[at + 1] = 0xe9;
          new DataView(c.buffer, c.byteOffset).setInt32(at + 2, v, true);
        }
      }
      return c;
    },
  };
}

/**
 * The trace of running the unpoked code from slot `entry`, each visit's choice from `choices` (a jcc's way, an
 * indirect jump's slot), a TSC every 8 visits: valid until a poke changes the code the decoder walks.
 */
function execute(slots: { kind: number; to: number }[], entry: number, choices: number[]): Uint8Array {
  const e = new PacketEncoder();
  let tsc = 1000n;
  e.psb();
  e.tsc(tsc);
  e.psbend();
  e.tipPge(BASE + BigInt(entry * 16));
  const stack: number[] = [];
  let i = entry;
  choices.forEach((c, n) => {
    if (n % 8 === 7) {
      tsc += BigInt(20 + (c % 200));
      e.tsc(tsc);
    }
    const s = slots[i]!;
    if (s.kind < 4) {
      e.branch((c & 1) === 1);
      i = c & 1 ? s.to : i + 1;
    } else if (s.kind < 6) {
      stack.push(i + 1);
      i = s.to;
    } else if (s.kind < 7) i = s.to;
    else if (s.kind < 9 && stack.length) {
      e.branch(true); // a compressed return
      i = stack.pop()!;
    } else {
      // a return with nothing on the stack, or jmp rax: a TIP says where
      i = c % SLOTS;
      e.tip(BASE + BigInt(i * 16));
    }
    if (i >= SLOTS) i = 0;
  });
  e.flushTnt();
  return e.bytes();
}

test('TNT patterns on random code and its trace, with pokes between: as the walk bit by bit', () => {
  let poked = 0;
  fc.assert(
    fc.property(
      fc.array(slot, { minLength: SLOTS, maxLength: SLOTS }),
      fc.nat(SLOTS - 1),
      fc.array(fc.nat(), { minLength: 150, maxLength: 400 }),
      fc.array(fc.record({ at: fc.integer({ min: 1, max: 3000 }), slot: fc.nat(SLOTS - 1) }), { maxLength: 6 }),
      (slots, entry, choices, pokeAt) => {
        // the last slot jumps back to the first: a jcc not taken there would leave the code
        slots[SLOTS - 1] = { nops: slots[SLOTS - 1]!.nops, kind: 6, to: 0 };
        const bytes = randomCode(slots);
        // two CPUs decoded in perf's time order (their runs pause at each other's times)
        const traces = [execute(slots, entry, choices), execute(slots, (entry + 1) % SLOTS, choices.slice().reverse())];
        const pokes = pokeAt
          .map((p) => ({
            time: ((1000n + BigInt(p.at)) * 512n) >> 10n,
            addr: BASE + BigInt(p.slot * 16 + slots[p.slot]!.nops),
            len: 6,
          }))
          .sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
        const run = (sink: 'quiet' | 'walk' | 'branches', withPokes = true) => {
          const errors: string[] = [];
          const s: FlowSink = { error: (x) => errors.push(show(x)) };
          if (sink !== 'branches') s.walkQuiet = true;
          else s.branch = () => {};
          const p = withPokes ? pokes : [];
          const cpus = traces.map((trace, cpu) => ({ cpu, trace }));
          const code = pokedCode(bytes, p);
          const r = decodeFlow({
            cpus,
            pokes: p,
            code,
            timeConv,
            eventTimes: [],
            sink: s,
            tntPatterns: sink === 'quiet',
          });
          return { errors, instructions: r.instructions };
        };
        const quiet = run('quiet');
        assert.deepEqual(quiet, run('walk'));
        assert.deepEqual(quiet, run('branches'));
        const unpoked = run('quiet', false);
        // the trace is the unpoked code's: it decodes without errors
        assert.deepEqual(unpoked.errors, []);
        if (unpoked.instructions !== quiet.instructions) poked++;
      },
    ),
    { numRuns: 200 },
  );
  // pokes must change the decode often, or stale patterns could go unseen
  assert.ok(poked > 40, `${poked} of 200 runs changed by pokes`);
});
