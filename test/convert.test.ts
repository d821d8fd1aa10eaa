import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runCli, runPerf, repoRoot } from './cli.js';
import { perfDataToJsonl, jsonlToPerfData } from '../src/perfdata/jsonl.js';
import { emptyAttr, withAttrFlag } from '../src/abi/event-attr.js';
import { toJsonValue } from '../src/perfdata/jsonl-values.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const tmp = tempDir('perfpoke-convert-');
const fixtures = ['test/fixtures/recorded', 'test/fixtures/features'].flatMap((d) => {
  const dir = join(repoRoot, d);
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.data'))
        .map((f) => join(dir, f))
    : [];
});

test('perf.data → jsonl → perf.data → jsonl is the identity, both byte orders', async () => {
  assert.ok(fixtures.length >= 10);
  for (const f of fixtures) {
    const a = join(tmp, 'a.jsonl');
    await perfDataToJsonl(f, a);
    for (const bigEndian of [false, true]) {
      const d = join(tmp, 'b.data');
      const b = join(tmp, 'b.jsonl');
      await jsonlToPerfData(a, d, { bigEndian });
      await perfDataToJsonl(d, b);
      const la = readFileSync(a, 'utf8').split('\n');
      const lb = readFileSync(b, 'utf8').split('\n');
      // the first line names the byte order and input mode; pipe inputs become file mode
      // EVENT_DESC/SAMPLE_TIME are regenerated; pipe-mode tracing data becomes the TRACING_DATA feature in file mode
      const norm = (l: string[]) =>
        l
          .slice(1)
          .filter((x) => !/"name":"(EVENT_DESC|SAMPLE_TIME|COMPRESSED|TRACING_DATA)"|^\{"kind":"tracing_data"/.test(x));
      assert.deepEqual(norm(lb), norm(la), `${f} ${bigEndian ? 'BE' : 'LE'}`);
      assert.equal(JSON.parse(lb[0]!).byteOrder, bigEndian ? 'big' : 'little');
    }
  }
});

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const bytes = (max: number) => fc.uint8Array({ maxLength: max });
const name = fc.stringMatching(/^[a-z_./[\]0-9]{0,30}$/);

/** Records of several kinds, in the JSON-lines form, for the attr built below (IP|TID|TIME|ID|CPU, sample_id_all). */
const recordArb = fc.oneof(
  fc
    .record({
      addr: u64,
      old: bytes(20),
      new: bytes(20),
      pid: fc.nat(1 << 30),
      tid: fc.nat(1 << 30),
      time: u64,
      id: fc.constant(7n),
      cpu: fc.nat(255),
    })
    .map((r) => ({ kind: 'text_poke', type: 20, misc: 1, ...r })),
  fc
    .record({ addr: u64, len: fc.nat(0xffffffff), ksymType: fc.nat(3), flags: fc.nat(1), name })
    .map((r) => ({ kind: 'ksymbol', type: 17, misc: 0, ...r })),
  fc
    .record({ pid: fc.nat(1 << 30), tid: fc.nat(1 << 30), comm: name })
    .map((r) => ({ kind: 'comm', type: 3, misc: 0, ...r })),
  fc
    .record({
      ip: u64,
      pid: fc.nat(1 << 30),
      tid: fc.nat(1 << 30),
      time: u64,
      id: fc.constant(7n),
      cpu: fc.nat(255),
      cpuRes: fc.constant(0),
    })
    .map((r) => ({ kind: 'sample', type: 9, misc: 2, ...r })),
  fc
    .record({
      type: fc.integer({ min: 90, max: 200 }),
      bytes: bytes(40).map((b) => b.subarray(0, b.length - (b.length % 8))),
    })
    .map((r) => ({ kind: 'unknown', misc: 0, ...r })),
);

test('property: generated records survive jsonl → perf.data → jsonl in both byte orders', async () => {
  const attr = {
    ...emptyAttr(),
    type: 1,
    size: 128,
    sampleType: 0xc7n,
    flags: withAttrFlag(withAttrFlag(0n, 'sample_id_all'), 'text_poke'),
  };
  const headLine = JSON.stringify({
    kind: 'perf.data',
    format: 'perfpoke-jsonl',
    version: 1,
    byteOrder: 'little',
    pipe: false,
    attrs: [toJsonValue({ name: 'dummy', attr, ids: [7n] })],
  });
  await fc.assert(
    fc.asyncProperty(fc.array(recordArb, { minLength: 1, maxLength: 12 }), fc.boolean(), async (recs, bigEndian) => {
      const src = join(tmp, 'gen.jsonl');
      writeFileSync(src, `${[headLine, ...recs.map((r) => JSON.stringify(toJsonValue(r)))].join('\n')}\n`);
      const d = join(tmp, 'gen.data');
      const back = join(tmp, 'gen2.jsonl');
      await jsonlToPerfData(src, d, { bigEndian });
      await perfDataToJsonl(d, back);
      const got = readFileSync(back, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((o) => o.kind !== 'perf.data' && o.kind !== 'feature');
      assert.equal(got.length, recs.length);
      got.forEach((g, i) => {
        const want = toJsonValue(recs[i]) as Record<string, unknown>;
        for (const [k, v] of Object.entries(want))
          assert.deepEqual(g[k], v, `record ${i} (${String(want.kind)}) field ${k}`);
      });
    }),
    { numRuns: 25 },
  );
});

test('a hand-written TEXT_POKE line becomes a file perf 6.1 shows', async (t) => {
  const attr = {
    ...emptyAttr(),
    type: 1,
    size: 128,
    config: 9n,
    sampleType: 0x87n,
    flags: withAttrFlag(withAttrFlag(withAttrFlag(0n, 'sample_id_all'), 'text_poke'), 'ksymbol'),
  };
  const src = join(tmp, 'hand.jsonl');
  writeFileSync(
    src,
    [
      JSON.stringify({ kind: 'perf.data', attrs: [toJsonValue({ name: 'dummy:u', attr, ids: [] })] }),
      '{"kind":"text_poke","addr":"0xffffffff81000000","old":"0f1f440000",' +
        '"new":"e9fb0f0000","pid":0,"tid":0,"time":"0x3b9aca00","cpu":1}',
      '{"kind":"finished_round"}',
    ].join('\n'),
  );
  for (const bigEndian of [false, true]) {
    const out = join(tmp, 'hand.data');
    if (!bigEndian) {
      const r = runCli(['convert', '-i', src, '-o', out]);
      assert.equal(r.status, 0, r.stderr);
    } else await jsonlToPerfData(src, out, { bigEndian });
    if (!needTool(t, 'perf')) return;
    const p = runPerf(['script', '-D', '-i', out])!;
    assert.equal(p.status, 0, p.stderr);
    assert.doesNotMatch(p.stderr, /warning|failed|error/i);
    // cpu 1, time 1000000000 (0x3b9aca00), as written in the line above
    assert.match(
      p.stdout,
      new RegExp(
        String.raw`\n1 1000000000 0x\w+ \[0x38\]: PERF_RECORD_TEXT_POKE ffffffff81000000 +old len 5 new len 5` +
          String.raw`\n\s+Old bytes: 0f 1f 44 00 00\n\s+New bytes: e9 fb 0f 00 00`,
      ),
    );
  }
});

test('convert errors: bad JSON names the line, exit 2; no output file left', () => {
  const src = join(tmp, 'bad.jsonl');
  writeFileSync(src, '{"kind":"perf.data","attrs":[]}\n{"kind":"comm",\n');
  const out = join(tmp, 'bad-out.data');
  const r = runCli(['convert', '-i', src, '-o', out]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /bad\.jsonl:2: not JSON/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.equal(existsSync(out), false);
  assert.deepEqual(
    readdirSync(tmp).filter((f) => f.includes('.tmp-')),
    [],
  );
});

test('hand-written attrs may give u64 fields as numbers or decimal strings; unknown fields are refused', async () => {
  const src = join(tmp, 'num.jsonl');
  writeFileSync(
    src,
    '{"kind":"perf.data","attrs":[{"name":"dummy:u","attr":{"type":1,' +
      '"size":128,"config":9,"sampleType":135,"flags":"9127067648"},"ids":[5]}]}\n' +
      '{"kind":"text_poke","addr":"0xffffffff81000000","old":"0f1f440000",' +
      '"new":"e9fb0f0000","pid":0,"tid":0,"time":1000000000,"cpu":1}\n',
  );
  const out = join(tmp, 'num.data');
  await jsonlToPerfData(src, out);
  const back = join(tmp, 'num2.jsonl');
  await perfDataToJsonl(out, back);
  const lines = readFileSync(back, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const head = lines[0] as { attrs: { attr: Record<string, unknown>; ids: string[] }[] };
  assert.equal(head.attrs[0]!.attr.sampleType, '0x87');
  assert.equal(head.attrs[0]!.attr.flags, '0x220040000');
  assert.deepEqual(head.attrs[0]!.ids, ['0x5']);
  const poke = lines.find((l) => l.kind === 'text_poke')!;
  assert.equal(poke.time, '0x3b9aca00');
  writeFileSync(src, '{"kind":"perf.data","attrs":[{"attr":{"sampleTyp":1}}]}\n');
  await assert.rejects(jsonlToPerfData(src, out), /unknown attr field 'sampleTyp'/);
});
