/**
 * perfpoke check: every poke's old bytes against the image at its time.
 * Dropping pokes from a file must flag exactly the sites where a dropped
 * poke is followed by a kept one (no false positives, none missed), with a
 * window that contains the lost poke's time. Property-tested in-process over
 * random site histories and drop sets, then through the CLI on files.
 *
 * The verdicts (consistent 0 / inconsistent 1 / inconclusive 4), on files
 * the project's writer makes from the kcore fixture and from the real Linux
 * 6.1 recordings: every missing piece of evidence makes the answer
 * inconclusive, with its reason; Linux 6.1's double delivery is a note.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { runCli, repoRoot } from './cli.js';
import { checkSummary, parseLines, validateLines, type Line } from './json-lines.js';
import { cutDataSection, cutLastRecord, rewriteRecording } from './verdict-fixtures.js';
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

/** `check --json`: every line valid against docs/json, the summary last. */
function checkJson(input: string): { status: number; lines: Line[]; summary: Line } {
  const r = runCli(['check', '-i', input, '--json']);
  assert.equal(r.stderr, '', r.stderr);
  const lines = parseLines(r.stdout);
  validateLines(lines);
  const summary = checkSummary(lines);
  assert.equal(summary.exit_code, r.status, 'exit_code is the exit status');
  return { status: r.status, lines, summary };
}
const ofType = (ls: Line[], t: string): Line[] => ls.filter((l) => l.type === t);
const reasonCodes = (s: Line): string[] => (s.reasons as { code: string }[]).map((x) => x.code);

test('check on the kcore fixture: consistent, exit 0', () => {
  const { status, summary } = checkJson(basic);
  assert.equal(status, 0);
  assert.equal(summary.verdict, 'consistent');
  assert.equal(summary.pokes, pokesOf(basicSites()).length + 2, 'every site poke plus the trampoline create/remove');
  assert.equal(summary.stale, 0);
  assert.deepEqual(summary.reasons, []);
});

test('check on files with random pokes dropped: exactly the affected sites, exit 1', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-check-'));
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
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-check-'));
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
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-check-'));
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

interface VerdictCase {
  name: string;
  make: (src: string, dst: string) => Promise<void> | void;
  verdict: 'consistent' | 'inconsistent' | 'inconclusive';
  status: number;
  /** Reason codes, in order. */
  reasons: string[];
  /** The text output's reason line (one line: why; what to do). */
  text?: RegExp;
}

const realKernel = join(repoRoot, 'test', 'fixtures', 'real-kernel');

function strip(src: string, dst: string): void {
  const r = runCli(['inject', '--strip', 'text_poke', '-i', src, '-o', dst]);
  assert.equal(r.status, 0, r.stderr);
}
function dataOnly(src: string, dst: string): void {
  mkdirSync(dst, { recursive: true });
  cpSync(join(src, 'data'), join(dst, 'data'));
}
function withKcore(src: string, dst: string, data: (to: string) => void): void {
  mkdirSync(dst, { recursive: true });
  cpSync(join(src, 'kcore_dir'), join(dst, 'kcore_dir'), { recursive: true });
  data(join(dst, 'data'));
}

/** The cases, for a source directory whose first poke is followed by a later poke at its site. */
function cases(firstStalePoke: number): VerdictCase[] {
  return [
    { name: 'as recorded', make: (s, d) => rewriteRecording(s, d, {}), verdict: 'consistent', status: 0, reasons: [] },
    {
      name: 'one poke dropped',
      make: (s, d) => rewriteRecording(s, d, { dropPoke: firstStalePoke }),
      verdict: 'inconsistent',
      status: 1,
      reasons: [],
    },
    {
      name: 'TEXT_POKE stripped (inject --strip text_poke)',
      make: strip,
      verdict: 'inconclusive',
      status: 4,
      reasons: ['no-text-poke-records'],
      text: /^inconclusive: event \S+ asked for TEXT_POKE records but the file has none .*; record again on a kernel/m,
    },
    {
      name: 'no attr with text_poke',
      make: (s, d) => rewriteRecording(s, d, { noTextPokeAttr: true }),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['no-text-poke-attr'],
      text: /^inconclusive: no event in the recording has attr\.text_poke set.*; record with `perf record --kcore -e dummy/m,
    },
    {
      name: 'a LOST record on the poke event',
      make: (s, d) => rewriteRecording(s, d, { lostAfterPoke: { n: 2, lost: 3n } }),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['lost-records'],
      text: /^inconclusive: 3 record\(s\) lost \(PERF_RECORD_LOST\) on event \S+ on cpu \d+: pokes may be missing between \d+\.\d{6} and \d+\.\d{6}; record again with bigger ring buffers/m,
    },
    {
      name: 'no kcore_dir',
      make: dataOnly,
      verdict: 'inconclusive',
      status: 4,
      reasons: ['no-kcore'],
      text: /^inconclusive: no kcore_dir: (\d+) of \1 poke\(s\) agree with the earlier pokes at their site, but .*; pass the `perf record --kcore` directory/m,
    },
    {
      name: 'data section cut short (header says more)',
      make: (s, d) => withKcore(s, d, (to) => cutDataSection(join(s, 'data'), to, 0.5)),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['truncated'],
      text: /^inconclusive: the file is cut short .*perf_file_header\.data.*; check a complete copy/m,
    },
    {
      name: 'last record cut',
      make: (s, d) => withKcore(s, d, (to) => cutLastRecord(join(s, 'data'), to, 3)),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['truncated'],
      text: /^inconclusive: the data section could not be read to its end .*: later pokes are not in the check; check/m,
    },
  ];
}

async function verdictTable(t: { diagnostic: (s: string) => void }, src: string, firstStale: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-verdict-'));
  try {
    for (const [k, c] of cases(firstStale).entries()) {
      const d = join(dir, `case${k}`);
      await c.make(src, d);
      const { status, summary } = checkJson(d);
      assert.equal(summary.verdict, c.verdict, `${c.name}: ${JSON.stringify(summary.reasons)}`);
      assert.equal(status, c.status, c.name);
      assert.deepEqual(reasonCodes(summary), c.reasons, c.name);
      if (c.text) {
        const r = runCli(['check', '-i', d]);
        assert.equal(r.status, c.status);
        assert.match(r.stdout, c.text, c.name);
        assert.match(r.stdout, new RegExp(`\\n${c.verdict}\\n$`), c.name);
      }
      t.diagnostic(`${src.slice(repoRoot.length + 1)}: ${c.name} -> ${summary.verdict} (exit ${status})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('verdicts on the kcore fixture rewritten by the project writer', async (t) => {
  await verdictTable(t, basic, 0);
});

test('verdicts on the real Linux 6.1 recording perf-alone', async (t) => {
  // the first poke at ftrace_call, a site poked again later, so dropping it leaves the next one stale
  const { loadMachine } = await import('../src/machine/from-perf-data.js');
  const m = await loadMachine(join(realKernel, 'perf-alone'));
  const site = m.image.sites.find((s) => s.pokes.length > 2)!;
  const first = m.pokes.indexOf(site.pokes[0]!.poke);
  await verdictTable(t, join(realKernel, 'perf-alone'), first);
});

test('a LOST record on an event without text_poke leaves the verdict consistent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-verdict-'));
  try {
    await rewriteRecording(join(realKernel, 'perf-alone'), dir, {
      lostAfterPoke: { n: 5, lost: 9n, otherEvent: true },
    });
    const { status, summary } = checkJson(dir);
    assert.equal(status, 0);
    assert.equal(summary.verdict, 'consistent');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Linux 6.1 double delivery (real two-consumer recording): consistent, each poke once, duplicates noted', async () => {
  const rec = join(realKernel, 'perfpoke-two');
  const { status, summary } = checkJson(rec);
  assert.equal(status, 0, JSON.stringify(summary));
  assert.equal(summary.verdict, 'consistent');
  assert.deepEqual(summary.text_poke_events, ['dummy', 'dummy:u']);
  // perf 6.1 prints 596 TEXT_POKEs: 298 pokes, each once per text_poke event
  assert.equal(summary.pokes, 298);
  assert.equal(summary.duplicates, 298);
  assert.equal(summary.stale, 0);
  assert.deepEqual(summary.notes, [
    '298 poke(s) delivered twice (one per text_poke event: dummy, dummy:u); ' +
      'Linux 6.1 writes each poke once per event, so each is applied once',
  ]);
  const txt = runCli(['check', '-i', rec]);
  assert.match(txt.stdout, /^note: 298 poke\(s\) delivered twice \(one per text_poke event: dummy, dummy:u\)/m);
  assert.match(txt.stdout, /\nconsistent\n$/);
  // the folded copies are exactly the inflated records (the kernel bug's second copies)
  const { loadMachine } = await import('../src/machine/from-perf-data.js');
  const { PerfFile } = await import('../src/perfdata/perf-file.js');
  const m = await loadMachine(rec);
  const inflated = new Set<number>();
  const f = await PerfFile.open(join(rec, 'data'));
  for await (const raw of f.records()) {
    if (raw.type !== 20) continue;
    const r = raw.decode();
    if (r.kind === 'text_poke' && r.inflatedBy) inflated.add(r.fileOffset);
  }
  await f.close();
  assert.deepEqual(new Set(m.copies.map((c) => c.copy.fileOffset)), inflated);
});

test('double delivery made by the writer: folded; copies too far apart or from one event are not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-verdict-'));
  try {
    await rewriteRecording(basic, join(dir, 'two'), { secondEvent: { delayNs: 100n } });
    const two = checkJson(join(dir, 'two'));
    assert.equal(two.summary.verdict, 'consistent');
    assert.equal(two.summary.duplicates, two.summary.pokes);
    // 20 ms apart: beyond COPY_WINDOW_NS, so they are two pokes and the second is stale
    await rewriteRecording(basic, join(dir, 'far'), { secondEvent: { delayNs: 20_000_000n } });
    const far = checkJson(join(dir, 'far'));
    assert.equal(far.summary.verdict, 'inconsistent');
    assert.equal(far.summary.duplicates, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('LOST_SAMPLES and AUX truncated/collision on the poke event: inconclusive, each named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-verdict-'));
  try {
    const want = {
      lost_samples:
        /^inconclusive: 4 sample\(s\) lost \(PERF_RECORD_LOST_SAMPLES\) on event dummy:u on cpu \d+: pokes may be missing between \d+\.\d{6} and \d+\.\d{6}; /m,
      aux_truncated:
        /^inconclusive: AUX area truncated \(4 bytes\) on event dummy:u on cpu \d+: pokes may be missing between/m,
      aux_collision:
        /^inconclusive: AUX area collision \(4 bytes\) on event dummy:u on cpu \d+: pokes may be missing between/m,
    } as const;
    for (const [kind, re] of Object.entries(want)) {
      const d = join(dir, kind);
      await rewriteRecording(join(realKernel, 'perf-alone'), d, {
        lostAfterPoke: { n: 10, lost: 4n, kind: kind as keyof typeof want },
      });
      const { status, summary } = checkJson(d);
      assert.equal(status, 4, kind);
      assert.deepEqual(reasonCodes(summary), ['lost-records'], kind);
      assert.match(runCli(['check', '-i', d]).stdout, re, kind);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a poke in a KSYMBOL range that kcore_dir does not hold: inconclusive (outside-kcore)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-verdict-'));
  try {
    // BPF code registered by KSYMBOL past the module area kcore_dir holds, then poked
    const at = MODTEXT + 0x10000n;
    const sid = { time: 5_000_000_000_000n, cpu: 0 };
    writeKcoreDir(join(dir, 'f'), basicSites(), {
      extra: [
        { kind: 'ksymbol', addr: at, len: 64, ksymType: 1, flags: 0, name: 'bpf_prog_x', sid },
        {
          kind: 'text_poke',
          addr: at + 8n,
          oldBytes: Uint8Array.from([0x0f, 0x1f, 0x44, 0x00, 0x00]),
          newBytes: Uint8Array.from([0xe8, 0, 0, 0, 0]),
          sid: { ...sid, time: sid.time + 1n },
        },
      ],
    });
    const { status, summary } = checkJson(join(dir, 'f'));
    assert.equal(status, 4);
    assert.deepEqual(reasonCodes(summary), ['outside-kcore']);
    assert.equal(summary.uncovered, 1);
    assert.match(
      (summary.reasons as { why: string }[])[0]!.why,
      new RegExp(`^1 poke\\(s\\) at addresses kcore_dir does not hold \\(first at ${(at + 8n).toString(16)}\\)`),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
