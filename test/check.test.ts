/**
 * perfpoke check: every poke's old bytes against the image at its time.
 * Dropping pokes from a file must flag exactly the sites where a dropped
 * poke is followed by a kept one (no false positives, none missed), with a
 * window that contains the lost poke's time. Property-tested in-process over
 * random site histories and drop sets, then through the CLI on files.
 * The verdicts on files missing evidence: test/check-verdicts.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runCli, repoRoot } from './cli.js';
import { checkJson, ofType } from './json-lines.js';
import { CodeImage } from '../src/machine/code-image.js';
import { checkImage } from '../src/machine/check.js';
import type { Poke } from '../src/machine/poke.js';
import { PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_USER } from '../src/abi/record-type.js';
import {
  basicSites,
  kernelText,
  KTEXT,
  MODTEXT,
  pokesOf,
  TRAMP,
  writeKcoreDir,
  type SiteHistory,
} from './fixtures/kcore/scenario.js';
import { tempDir } from './temp-dir.js';

const basic = join(repoRoot, 'test', 'fixtures', 'kcore', 'basic');

/**
 * Sites a checker must flag, and for each the time the first detectable lost
 * poke happened. With kcore every loss followed by a kept poke shows; without
 * it the first kept poke defines the bytes, so losses before it cannot.
 */
function expected(sites: SiteHistory[], drop: Set<number>, withKcore = true): Map<bigint, bigint> {
  const all = pokesOf(sites);
  const out = new Map<bigint, bigint>();
  sites.forEach((s, si) => {
    const mine = all.map((p, i) => ({ p, i })).filter((x) => x.p.site === si);
    const firstKept = mine.findIndex((x) => !drop.has(x.i));
    const firstDrop = mine.findIndex((x, k) => drop.has(x.i) && (withKcore || (firstKept >= 0 && k > firstKept)));
    if (firstDrop >= 0 && mine.slice(firstDrop + 1).some((x) => !drop.has(x.i)))
      out.set(s.addr, mine[firstDrop]!.p.time);
  });
  return out;
}

/** Random histories: each state is new at its site (jmp to a fresh target), so every lost poke is detectable. */
const historiesArb = fc
  .array(
    fc.record({
      nStates: fc.integer({ min: 1, max: 6 }),
      times: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 6, maxLength: 6 }),
      short: fc.boolean(),
    }),
    { minLength: 1, maxLength: 25 },
  )
  .map((specs) =>
    specs.map((sp, i): SiteHistory => {
      const addr = KTEXT + 0x2000n + BigInt(i) * 0x10n;
      const states = Array.from({ length: sp.nStates }, (_, k) => (sp.short ? [0xeb, k] : [0xe9, k, i & 0xff, 0, 0]));
      const times = sp.times
        .slice(0, sp.nStates - 1)
        .sort((a, b) => a - b)
        .map((t) => 1_000_000n + BigInt(t) * 100n);
      return { name: `s${i}`, addr, states, times };
    }),
  );

function toPokes(sites: SiteHistory[], drop: Set<number>): Poke[] {
  return pokesOf(sites)
    .map((p, i) => ({
      time: p.time,
      cpu: 0,
      addr: p.addr,
      oldBytes: p.oldBytes,
      newBytes: p.newBytes,
      fileOffset: i * 64,
      misc: PERF_RECORD_MISC_KERNEL,
    }))
    .filter((_, i) => !drop.has(i));
}

test('check flags exactly the sites with lost pokes, with a window holding the loss (property)', () => {
  fc.assert(
    fc.property(
      historiesArb,
      fc.array(fc.integer({ min: 0, max: 200 })),
      fc.boolean(),
      (sites, dropList, withKcore) => {
        const n = pokesOf(sites).length;
        const drop = new Set(dropList.filter((d) => d < n));
        const { ktext } = kernelText(sites);
        const segs = withKcore ? [{ vaddr: KTEXT, bytes: ktext, flags: 7 }] : [];
        const r = checkImage(CodeImage.build(segs, toPokes(sites, drop)));
        const want = expected(sites, drop, withKcore);
        assert.deepEqual(new Set(r.disagreements.map((d) => d.siteStart)), new Set(want.keys()));
        for (const d of r.disagreements) {
          const lost = want.get(d.siteStart)!;
          assert.ok(d.windowAfter === undefined || d.windowAfter <= lost, 'lost poke after the window start');
          assert.ok(lost <= d.windowBefore, 'lost poke before the window end');
        }
        assert.equal(r.ok, want.size === 0);
        assert.equal(r.pokes, n - drop.size);
      },
    ),
    { numRuns: 300 },
  );
});

const hex = (v: bigint): string => `0x${v.toString(16)}`;

test('check on the kcore fixture: consistent, exit 0', () => {
  const { status, summary } = checkJson(basic);
  assert.equal(status, 0);
  assert.equal(summary.verdict, 'consistent');
  assert.equal(summary.pokes, pokesOf(basicSites()).length + 2, 'every site poke plus the trampoline create/remove');
  assert.equal(summary.stale, 0);
  assert.deepEqual(summary.reasons, []);
});

test('check on files with random pokes dropped: exactly the affected sites, exit 1', () => {
  const dir = tempDir('perfpoke-check-');
  try {
    const sites = basicSites();
    const n = pokesOf(sites).length;
    const samples = fc.sample(fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: 6 }), {
      numRuns: 2,
      seed: 99,
    });
    for (const dl of samples) {
      const drop = new Set(dl);
      const d = join(dir, 'case');
      writeKcoreDir(d, sites, { drop, withTrampoline: true });
      const { status, lines, summary } = checkJson(d);
      const stale = ofType(lines, 'stale');
      const want = expected(sites, drop);
      assert.deepEqual(new Set(stale.map((x) => BigInt(x.site_start as string))), new Set(want.keys()), `drop ${dl}`);
      assert.equal(status, want.size ? 1 : 0);
      assert.equal(summary.verdict, want.size ? 'inconsistent' : 'consistent');
      for (const x of stale) {
        const lost = want.get(BigInt(x.site_start as string))!;
        const after = x.missing_after as { time_ns: string } | null;
        const before = x.missing_before as { time_ns: string };
        assert.ok((after === null || BigInt(after.time_ns) <= lost) && lost <= BigInt(before.time_ns));
      }
    }
    // text output names the site and the window: drop the first jump-label flip
    writeKcoreDir(d0(dir), sites, { drop: new Set([0]), withTrampoline: true });
    const t = runCli(['check', '-i', d0(dir)]);
    assert.equal(t.status, 1);
    assert.match(
      t.stdout,
      /site ffffffff81000110-ffffffff81000115 do_sys_open\+0x10: 1 stale poke\(s\), first at 1000\.000005/,
    );
    assert.match(t.stdout, /a change is missing between the start of the recording and 1000\.000005/);
    assert.match(t.stdout, /\ninconsistent\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
const d0 = (dir: string) => join(dir, 'text');

test('check reports what perf drops: non-kernel cpumode, outside maps, unmatched trampoline removal', () => {
  const dir = tempDir('perfpoke-check-');
  try {
    const sites = basicSites();
    const sid = (time: bigint) => ({ time, cpu: 1 });
    const b = (x: number[]) => Uint8Array.from(x);
    writeKcoreDir(`${dir}/f`, sites, {
      withTrampoline: true,
      extra: [
        {
          kind: 'text_poke',
          addr: KTEXT + 0x700n,
          oldBytes: b([0xcc]),
          newBytes: b([0x90]),
          misc: PERF_RECORD_MISC_USER,
          sid: sid(5_000_000_000_000n),
        },
        {
          kind: 'text_poke',
          addr: KTEXT + 0x5000n,
          oldBytes: b([0x90]),
          newBytes: b([0xcc]),
          sid: sid(5_000_000_000_001n),
        },
        { kind: 'text_poke', addr: TRAMP + 0x100n, oldBytes: b([0xc3]), newBytes: b([]), sid: sid(5_000_000_000_002n) },
        {
          kind: 'text_poke',
          addr: MODTEXT + 0x800n,
          oldBytes: b([]),
          newBytes: b([0xc3, 0xcc]),
          sid: sid(5_000_000_000_003n),
        },
        {
          kind: 'text_poke',
          addr: MODTEXT + 0x800n,
          oldBytes: b([0xc3]),
          newBytes: b([]),
          sid: sid(5_000_000_000_004n),
        },
      ],
    });
    const { status, lines, summary } = checkJson(`${dir}/f`);
    assert.equal(status, 1);
    assert.equal(summary.verdict, 'inconsistent');
    const dropped = ofType(lines, 'dropped').map((l) => [l.why, (l.poke as { addr: string }).addr, l.reason]);
    assert.deepEqual(dropped.slice(0, 2), [
      ['non-kernel-cpumode', hex(KTEXT + 0x700n), undefined],
      ['outside-maps', hex(KTEXT + 0x5000n), undefined],
    ]);
    assert.deepEqual(
      dropped.slice(2).map((x) => x[1]),
      [hex(TRAMP + 0x100n), hex(MODTEXT + 0x800n)],
    );
    assert.match(String(dropped[3]![2]), /removes 1 bytes, trampoline created with 2/);
    assert.equal(summary.stale, 0, 'the other pokes stay consistent');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check: bad input exits 2 with the offset; --help documents the verdicts and exit codes', () => {
  const dir = tempDir('perfpoke-check-');
  try {
    writeKcoreDir(`${dir}/f`, basicSites());
    const kc = join(dir, 'f', 'kcore_dir', 'kcore');
    writeFileSync(kc, readFileSync(kc).subarray(0, 100));
    const r = runCli(['check', '-i', `${dir}/f`]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /kcore: at offset 0x40: Elf64_Phdr table: truncated/);
    writeFileSync(join(dir, 'junk'), 'not a perf file at all');
    const r2 = runCli(['check', '-i', join(dir, 'junk')]);
    assert.equal(r2.status, 2);
    assert.match(r2.stderr, /bad magic/);
    const h = runCli(['check', '--help']);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /consistent\s+exit 0/);
    assert.match(h.stdout, /inconsistent\s+exit 1/);
    assert.match(h.stdout, /inconclusive\s+exit 4/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
