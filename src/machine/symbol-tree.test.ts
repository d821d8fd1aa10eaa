import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SymbolTree, treeSymbolTable } from './symbol-tree.js';
import { SymbolTable, type KernelSymbol } from './symbols.js';

type Shape = { id: number; red: boolean; depth: number }[];

/** Red-black and search-tree invariants, from the in-order walk and a recursive black-height check. */
function checkTree(t: SymbolTree, live: number[], keys: bigint[]): void {
  const walk: Shape = t.inOrder();
  assert.deepEqual(
    walk.map((n) => n.id),
    [...live].sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b)),
    'in order: by start, equal starts in insertion order',
  );
  const tree = t as unknown as {
    left: Int32Array;
    right: Int32Array;
    parent: Int32Array;
    red: Uint8Array;
    root: number;
  };
  if (tree.root >= 0) assert.equal(tree.red[tree.root], 0, 'the root is black');
  const blackHeight = (n: number, parent: number): number => {
    if (n < 0) return 1;
    assert.equal(tree.parent[n], parent, `parent of ${n}`);
    if (tree.red[n]) {
      for (const c of [tree.left[n]!, tree.right[n]!])
        if (c >= 0) assert.equal(tree.red[c], 0, `red ${n} has a red child`);
    }
    const l = blackHeight(tree.left[n]!, n);
    assert.equal(blackHeight(tree.right[n]!, n), l, `black heights under ${n}`);
    return l + (tree.red[n] ? 0 : 1);
  };
  blackHeight(tree.root, -1);
}

test('SymbolTree keeps the red-black invariants through inserts (equal keys too) and erases', () => {
  fc.assert(
    fc.property(
      fc.array(fc.bigInt({ min: 0n, max: 40n }), { minLength: 1, maxLength: 120 }),
      fc.array(fc.nat(), { maxLength: 80 }),
      (keys, erasePicks) => {
        const t = new SymbolTree(4);
        for (const k of keys) t.insert(k);
        const live = keys.map((_, i) => i);
        checkTree(t, live, keys);
        for (const pick of erasePicks) {
          if (live.length === 0) break;
          const [id] = live.splice(pick % live.length, 1);
          t.erase(id!);
          checkTree(t, live, keys);
        }
      },
    ),
  );
});

test('SymbolTree.find is perf symbols__find: non-overlapping symbols give the sorted-list answer', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.bigInt({ min: 0n, max: 5000n }), { maxLength: 60 }),
      fc.array(fc.bigInt({ min: 0n, max: 5100n }), { maxLength: 60 }),
      (starts, probes) => {
        const sorted = [...starts].sort((a, b) => (a < b ? -1 : 1));
        // each symbol ends at or before the next start; some are zero-sized
        const syms: KernelSymbol[] = sorted.map((s, i) => {
          const next = sorted[i + 1] ?? s + 64n;
          const end = i % 5 === 0 ? s : s + (next - s) / 2n;
          return { start: s, end, name: `s${i}` };
        });
        // inserted in a shuffled (symbol-table) order, with nothing erased
        const order = { starts: [...syms].reverse().map((s) => s.start), dropped: [] };
        const table = treeSymbolTable(syms, order, [])!;
        const list = SymbolTable.of(syms);
        for (const p of [...probes, ...syms.flatMap((s) => [s.start, s.end])])
          assert.deepEqual(table.find(p), list.find(p), `0x${p.toString(16)}`);
      },
    ),
  );
});

test('overlapping symbols: the answer is the one the tree search meets first (a PLT entry inside _init)', () => {
  // _init (zero size, extended over .plt by fixup_end) and one PLT entry: inserted _init, then the entry,
  // the tree is _init with the entry as its right child, so the search meets _init first
  const init: KernelSymbol = { start: 0x1000n, end: 0x1100n, name: '_init' };
  const plt1: KernelSymbol = { start: 0x1020n, end: 0x1030n, name: 'a@plt' };
  const one = treeSymbolTable([init], { starts: [0x1000n], dropped: [] }, [plt1])!;
  assert.equal(one.find(0x1024n)?.name, '_init');
  // with many PLT entries inserted after it, the rebalancing lifts them above _init: the entries win
  const plt = Array.from({ length: 12 }, (_, i) => ({
    start: 0x1020n + BigInt(i) * 16n,
    end: 0x1030n + BigInt(i) * 16n,
    name: `f${i}@plt`,
  }));
  const many = treeSymbolTable([init], { starts: [0x1000n], dropped: [] }, plt)!;
  const names = plt.map((p) => many.find(p.start + 4n)?.name);
  assert.ok(names.filter((n) => n?.endsWith('@plt')).length >= 10, names.join(' '));
  assert.equal(many.find(0x1004n)?.name, '_init');
  assert.equal(many.length, 13);
  assert.equal(many.symbolAt(0).name, '_init');
});
