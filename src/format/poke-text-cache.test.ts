import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, PERF_RECORD_MISC_KERNEL } from '../abi/record-type.js';
import { CodeImage } from '../machine/code-image.js';
import type { KernelSymbolEvent, Poke } from '../machine/poke.js';
import { Symbolizer } from '../machine/symbolizer.js';
import { SymbolTable } from '../machine/symbols.js';
import { PokeTextCache } from './poke-text-cache.js';

const K = 0xffffffff81000000n;
const BYTES = [[0x0f, 0x1f, 0x44, 0x00, 0x00], [0xe9, 0x10, 0, 0, 0], [0x66, 0x90], [1, 2, 3, 4, 5, 6, 7, 8, 9], []];

/** What the cache must give back for a poke: its address, bytes and every name at its point. */
function fresh(s: Symbolizer, p: Poke): string {
  const at = { time: p.time, fileOffset: p.fileOffset };
  const names = [0n, 8n, 16n, 40n].map((d) => `${s.symOff(p.addr + d, at)}/${s.ksymbolAt(p.addr + d, at)}`);
  return `${p.addr.toString(16)} ${[...p.oldBytes]} > ${[...p.newBytes]} ${names.join(',')}`;
}

// The cache's promise: whatever it keeps, applied(seq) and copyOf(p) equal making the value afresh.
test('kept texts equal fresh ones: across KSYMBOLs, the kernel load, copies and a full table', () => {
  const pokeArb = fc.record({
    time: fc.integer({ min: 0, max: 30 }),
    // few sites and byte strings, so pokes meet the texts kept for others often
    site: fc.integer({ min: 0, max: 1 }),
    from: fc.oneof(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: BYTES.length - 1 })),
    to: fc.oneof(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: BYTES.length - 1 })),
  });
  const ksymArb = fc.record({
    time: fc.integer({ min: 0, max: 30 }),
    at: fc.integer({ min: 0, max: 2 }),
    un: fc.boolean(),
  });
  fc.assert(
    fc.property(
      fc.array(pokeArb, { minLength: 1, maxLength: 40 }),
      fc.array(ksymArb, { maxLength: 5 }),
      fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
      fc.integer({ min: 1, max: 6 }),
      (ps, ks, loadTime, maxEntries) => {
        const pokes: Poke[] = ps.map((p, j) => ({
          time: BigInt(p.time),
          cpu: 0,
          addr: K + BigInt(p.site * 64),
          oldBytes: Uint8Array.from(BYTES[p.from]!),
          newBytes: Uint8Array.from(BYTES[p.to]!),
          fileOffset: 100 + j * 8,
          misc: PERF_RECORD_MISC_KERNEL,
        }));
        const events: KernelSymbolEvent[] = ks
          .map((k, j) => ({
            time: BigInt(k.time),
            addr: K + BigInt(k.at * 32),
            len: 48,
            ksymType: 1,
            flags: k.un ? PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER : 0,
            name: `bpf_${j}`,
            fileOffset: 101 + j * 8,
          }))
          .sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset));
        const table = SymbolTable.of([{ start: K, end: K + 96n, name: 'kfunc' }]);
        const model = { usesKcore: true, symbols: table, segments: [], moduleMaps: [] };
        const load = loadTime === undefined ? undefined : { time: BigInt(loadTime), fileOffset: 0 };
        const s = new Symbolizer(table, events, load, { start: K, end: K + 64n }, model);
        const image = CodeImage.build([], pokes);
        let made = 0;
        const make = (p: Poke): string => {
          made++;
          return fresh(s, p);
        };
        const cache = new PokeTextCache(image, s, make, maxEntries);
        for (let q = 0; q < image.order.length; q++) {
          const p = image.store.peek(image.order[q]!);
          assert.equal(cache.applied(q), fresh(s, p));
          // a copy: the same poke, or one with other bytes or a later point
          const copy = { ...p, time: p.time + BigInt(q % 3), newBytes: q % 4 === 0 ? Uint8Array.of(0xc3) : p.newBytes };
          assert.equal(cache.copyOf(copy), fresh(s, copy));
        }
        assert.ok(made <= 2 * image.order.length);
        // out of order too (--site walks one site; a library caller may go back)
        for (let q = image.order.length - 1; q >= 0; q -= 2)
          assert.equal(cache.applied(q), fresh(s, image.store.peek(image.order[q]!)));
      },
    ),
    { numRuns: 300 },
  );
});
