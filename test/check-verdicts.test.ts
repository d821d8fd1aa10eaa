/**
 * `check`'s verdicts (consistent 0 / inconsistent 1 / inconclusive 4) on
 * files the project's writer makes from the kcore fixture and from the real
 * Linux 6.1 recordings (test/verdict-fixtures.ts): every missing piece of
 * evidence makes the answer inconclusive, with its one-line reason; Linux
 * 6.1's double delivery is a note, not a stale poke.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, repoRoot } from './cli.js';
import { checkJson, reasonCodes } from './json-lines.js';
import { cutDataSection, cutLastRecord, rewriteRecording, unfinishedFile } from './verdict-fixtures.js';
import { basicSites, MODTEXT, writeKcoreDir } from './fixtures/kcore/scenario.js';
import { tempDir } from './temp-dir.js';

const basic = join(repoRoot, 'test', 'fixtures', 'kcore', 'basic');

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
      text: /^inconclusive: no event in the recording has attr\.text_poke set.*; record with `perf record --kcore/m,
    },
    {
      name: 'a LOST record on the poke event',
      make: (s, d) => rewriteRecording(s, d, { lostAfterPoke: { n: 2, lost: 3n } }),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['lost-records'],
      text: new RegExp(
        '^inconclusive: 3 record\\(s\\) lost \\(PERF_RECORD_LOST\\) on event \\S+ on cpu \\d+: ' +
          'pokes may be missing between \\d+\\.\\d{6} and \\d+\\.\\d{6}; record again with bigger ring buffers',
        'm',
      ),
    },
    {
      name: 'no kcore_dir',
      make: dataOnly,
      verdict: 'inconclusive',
      status: 4,
      reasons: ['no-kcore'],
      text: /^inconclusive: no kcore_dir: (\d+) of \1 poke\(s\) agree with the earlier pokes at their site, .*; pass/m,
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
      name: 'perf record killed (data.size 0)',
      make: (s, d) => withKcore(s, d, (to) => unfinishedFile(join(s, 'data'), to)),
      verdict: 'inconclusive',
      status: 4,
      reasons: ['no-text-poke-records', 'truncated'],
      text: /^inconclusive: the data section could not be read to its end .*perf record did not finish/m,
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
  const dir = tempDir('perfpoke-verdict-');
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
  const dir = tempDir('perfpoke-verdict-');
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

test('Linux 6.1 double delivery (real two-consumer recording): consistent, duplicates noted', async () => {
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
  const dir = tempDir('perfpoke-verdict-');
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
  const dir = tempDir('perfpoke-verdict-');
  try {
    const want = {
      lost_samples:
        /^inconclusive: 4 sample\(s\) lost \(PERF_RECORD_LOST_SAMPLES\) on event dummy:u on cpu \d+: pokes may be /m,
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
  const dir = tempDir('perfpoke-verdict-');
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
