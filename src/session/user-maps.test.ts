import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UserMaps } from './user-maps.js';

/**
 * The objects-and-arrays UserMaps this module replaced (one object and three
 * BigInts per map, copied on fork): what the columns must agree with.
 */
interface ModelMap {
  start: bigint;
  end: bigint;
  pgoff: bigint;
  identity: boolean;
  filename: string;
}

class Model {
  readonly byPid = new Map<number, ModelMap[]>();

  mmap(pid: number, start: bigint, len: bigint, pgoff: bigint, filename: string, exec: boolean): void {
    const maps = this.byPid.get(pid) ?? [];
    this.byPid.set(pid, maps);
    const end = start + len;
    let lo = 0;
    let hi = maps.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (maps[mid]!.end <= start) lo = mid + 1;
      else hi = mid;
    }
    let k = lo;
    const repl: ModelMap[] = [];
    while (k < maps.length && maps[k]!.start < end) {
      const m = maps[k]!;
      if (m.start < start) repl.push({ ...m, end: start });
      if (m.end > end) repl.push({ ...m, start: end, pgoff: m.identity ? m.pgoff : m.pgoff + (end - m.start) });
      k++;
    }
    const anon = exec && filename === '//anon';
    const identity = filename === '//anon' || filename === '[heap]';
    const mine = { start, end, pgoff, identity, filename: anon ? `/tmp/perf-${pid}.map` : filename };
    const before = repl.filter((m) => m.start < start);
    const after = repl.filter((m) => m.start >= end);
    maps.splice(lo, k - lo, ...before, mine, ...after);
  }

  fork(pid: number, ppid: number): void {
    if (pid !== ppid)
      this.byPid.set(
        pid,
        (this.byPid.get(ppid) ?? []).map((m) => ({ ...m })),
      );
  }

  lookup(pid: number, ip: bigint) {
    const maps = this.byPid.get(pid) ?? [];
    let lo = 0;
    let hi = maps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = maps[mid]!;
      if (ip < m.start) hi = mid - 1;
      else if (ip >= m.end) lo = mid + 1;
      else {
        const mapIp = m.identity ? ip : BigInt.asUintN(64, ip - m.start + m.pgoff);
        return { filename: m.filename, identity: m.identity, start: m.start, mapIp };
      }
    }
    return undefined;
  }

  loadBase(pid: number, filename: string): bigint | undefined {
    let base: bigint | undefined;
    for (const m of this.byPid.get(pid) ?? [])
      if (m.filename === filename && (base === undefined || m.start < base)) base = m.start - m.pgoff;
    return base;
  }
}

const FILES = ['/usr/lib/libc.so.6', '/usr/bin/dash', '//anon', '[heap]'];

/** Addresses near a few bases: small ones, ones past 2^53 (kept exactly), and the top of the u64 range. */
const addr = fc
  .tuple(fc.constantFrom(0n, 0x7f0000000000n, 2n ** 53n - 0x40n, 2n ** 64n - 0x100n), fc.bigInt(0n, 0x80n))
  .map(([b, o]) => b + o);

const op = fc.oneof(
  fc.record({
    kind: fc.constant('mmap' as const),
    pid: fc.integer({ min: 1, max: 3 }),
    start: addr,
    len: fc.bigInt(0n, 0x60n),
    pgoff: fc.oneof(fc.bigInt(0n, 0x1000n), fc.constant(2n ** 60n)),
    file: fc.constantFrom(...FILES),
    exec: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('fork' as const),
    pid: fc.integer({ min: 1, max: 3 }),
    ppid: fc.integer({ min: 1, max: 3 }),
  }),
);

test('UserMaps: lookups and load bases agree with maps__fixup_overlappings on objects', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), fc.array(addr, { minLength: 1, maxLength: 20 }), (ops, probes) => {
      const maps = new UserMaps();
      const model = new Model();
      for (const o of ops) {
        if (o.kind === 'fork') {
          maps.onFork(o.pid, o.ppid);
          model.fork(o.pid, o.ppid);
        } else {
          maps.onMmap(o.pid, o.start, o.len, o.pgoff, o.file, o.exec);
          model.mmap(o.pid, o.start, o.len, o.pgoff, o.file, o.exec);
        }
        for (const pid of [1, 2, 3]) {
          for (const ip of probes) assert.deepEqual(maps.lookup(pid, ip), model.lookup(pid, ip));
          for (const f of [...FILES, '/tmp/perf-1.map']) assert.equal(maps.loadBase(pid, f), model.loadBase(pid, f));
        }
      }
    }),
  );
});

test('UserMaps: a fork shares the parent maps until either side maps something', () => {
  const maps = new UserMaps();
  maps.onMmap(1, 0x1000n, 0x1000n, 0n, '/usr/bin/dash');
  maps.onFork(2, 1);
  maps.onMmap(2, 0x1800n, 0x100n, 0x10n, '/usr/lib/libc.so.6');
  maps.onMmap(1, 0x3000n, 0x100n, 0n, '[heap]');
  assert.equal(maps.lookup(1, 0x1800n)?.filename, '/usr/bin/dash');
  assert.equal(maps.lookup(2, 0x1800n)?.mapIp, 0x10n);
  assert.equal(maps.lookup(2, 0x1900n)?.mapIp, 0x900n); // the tail of dash's map, pgoff moved on
  assert.equal(maps.lookup(2, 0x3000n), undefined);
  assert.equal(maps.lookup(1, 0x3010n)?.mapIp, 0x3010n);
});
