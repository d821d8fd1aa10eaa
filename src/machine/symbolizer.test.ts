import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';
import type { KernelSymbolEvent } from './poke.js';
import { NamingEpochs, Symbolizer, type EventPoint } from './symbolizer.js';
import { SymbolTable } from './symbols.js';

const K = 0xffffffff81000000n;
const ksym = (time: number, fileOffset: number, at: number, unregister: boolean): KernelSymbolEvent => ({
  time: BigInt(time),
  addr: K + BigInt(at * 16),
  len: 32,
  ksymType: 1,
  flags: unregister ? PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER : 0,
  name: `bpf_prog_${at}`,
  fileOffset,
});
const cmp = (a: EventPoint, b: EventPoint): number =>
  a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset;
const answers = (s: Symbolizer, at: EventPoint): string =>
  Array.from({ length: 12 }, (_, j) => {
    const a = K + BigInt(j * 8);
    return `${s.symOff(a, at)}|${s.ksymbolAt(a, at)}|${s.find(a, at)?.name}`;
  }).join(',');

// NamingEpochs promises: two points with the same number get the same names for every address,
// whatever the order the points come in.
test('points in one naming stretch get the same names (KSYMBOLs, the load of kcore_dir)', () => {
  const point = fc.record({ time: fc.integer({ min: 0, max: 40 }), fileOffset: fc.integer({ min: 0, max: 40 }) });
  fc.assert(
    fc.property(
      fc.array(fc.tuple(point, fc.integer({ min: 0, max: 5 }), fc.boolean()), { maxLength: 8 }),
      fc.option(point, { nil: undefined }),
      fc.array(point, { minLength: 1, maxLength: 30 }),
      fc.boolean(),
      (ks, loadAt, pts, sorted) => {
        const events = ks.map(([p, at, un]) => ksym(p.time, p.fileOffset, at, un)).sort((a, b) => cmp(a, b));
        const table = SymbolTable.of([{ start: K, end: K + 64n, name: 'kfunc' }]);
        const model = { usesKcore: true, symbols: table, segments: [], moduleMaps: [] };
        const load = loadAt && { time: BigInt(loadAt.time), fileOffset: loadAt.fileOffset };
        const s = new Symbolizer(table, events, load, { start: K, end: K + 32n }, model);
        const at = pts.map((p) => ({ time: BigInt(p.time), fileOffset: p.fileOffset }));
        if (sorted) at.sort(cmp);
        const walk = new NamingEpochs(s);
        const seen = new Map<number, string>();
        for (const p of at) {
          const settled = walk.settled;
          const before = [...seen.keys()].at(-1);
          const e = walk.at(p);
          if (sorted && settled) assert.equal(e, before, 'a settled walk keeps its number');
          const names = answers(s, p);
          if (seen.has(e)) assert.equal(names, seen.get(e));
          else seen.set(e, names);
        }
      },
    ),
  );
});
