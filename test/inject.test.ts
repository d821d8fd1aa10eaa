import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runPerf, repoRoot } from './cli.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import { emptyAttr, attrFlag } from '../src/abi/event-attr.js';
import { toJsonValue } from '../src/perfdata/jsonl-values.js';
import { jsonlToPerfData } from '../src/perfdata/jsonl.js';
import { inject } from '../src/cli/commands/inject.js';
import { UsageError } from '../src/cli/errors.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const tmp = tempDir('perfpoke-inject-');
const fx = (p: string) => join(repoRoot, 'test/fixtures', p);
const BAD = /warning|failed|error|not yet supported|unsupported|invalid/i;

async function typeCounts(path: string, textPokeAbi: 'final' | 'rfc' = 'final'): Promise<Map<number, number>> {
  const f = await PerfFile.open(path, { textPokeAbi });
  const m = new Map<number, number>();
  for await (const r of f.records()) m.set(r.type, (m.get(r.type) ?? 0) + 1);
  await f.close();
  return m;
}

function perfOk(args: string[]): string {
  const r = runPerf(args)!;
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, BAD, `perf ${args.join(' ')}`);
  return r.stdout;
}

test('--strip ksymbol,bpf_event drops exactly those records; perf reads the result', async (t) => {
  const input = fx('recorded/bpf.data');
  const out = join(tmp, 'strip.data');
  const r = runCli(['inject', '-i', input, '-o', out, '--strip', 'KSYMBOL,bpf_event']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /records written, \d+ dropped/);
  const before = await typeCounts(input);
  const after = await typeCounts(out);
  assert.ok((before.get(17) ?? 0) > 0 && (before.get(18) ?? 0) > 0, 'fixture has KSYMBOL and BPF_EVENT');
  assert.equal(after.get(17), undefined);
  assert.equal(after.get(18), undefined);
  for (const [type, n] of before) if (type !== 17 && type !== 18) assert.equal(after.get(type), n, `type ${type} kept`);
  if (!needTool(t, 'perf')) return;
  const stats = perfOk(['report', '--stats', '-i', out]);
  assert.doesNotMatch(stats, /KSYMBOL|BPF_EVENT/);
});

test('--time keeps the window: perf script shows what perf script --time shows on the input', async (t) => {
  if (!needTool(t, 'perf')) return;
  const input = fx('recorded/sw.data');
  const times = perfOk(['script', '-F', 'time', '-i', input])
    .split('\n')
    .map((l) => l.trim().replace(/:$/, ''))
    .filter(Boolean);
  const a = times[Math.floor(times.length / 4)]!;
  const b = times[Math.floor((3 * times.length) / 4)]!;
  const out = join(tmp, 'time.data');
  await inject({ input, output: out, time: `${a},${b}` });
  const got = perfOk(['script', '-i', out]);
  const want = perfOk(['script', '--time', `${a},${b}`, '-i', input]);
  assert.equal(got, want);
  assert.ok(got.split('\n').length < times.length);
  // side-band records are kept whatever their time, as perf --time keeps them
  const [after, before] = [await typeCounts(out), await typeCounts(input)];
  for (const type of [3, 4, 10]) assert.equal(after.get(type), before.get(type), `type ${type}`);
});

test(
  '--text-poke-abi=rfc converts the seed RFC pokes (type 19, attr bit 32) to TEXT_POKE (20, bit 33); ' +
    '--strip text_poke removes them',
  async (t) => {
    // an RFC-form file, written through the JSON-lines converter
    const attr = {
      ...emptyAttr(),
      type: 1,
      size: 128,
      config: 9n,
      sampleType: 0x87n,
      flags: (1n << 18n) | (1n << 32n),
    };
    const src = join(tmp, 'rfc.jsonl');
    writeFileSync(
      src,
      [
        JSON.stringify({ kind: 'perf.data', attrs: [toJsonValue({ name: 'dummy:u', attr, ids: [] })] }),
        '{"kind":"text_poke","abi":"rfc","misc":1,"addr":"0xffffffff81000000",' +
          '"old":"0f1f440000","new":"e9fb0f0000","pid":0,"tid":0,"time":"0x3b9aca00","cpu":0}',
        '{"kind":"text_poke","abi":"rfc","misc":1,"addr":"0xffffffff81000010",' +
          '"old":"e9fb0f0000","new":"0f1f440000","pid":0,"tid":0,"time":"0x3b9aca10","cpu":1}',
        '{"kind":"finished_round"}',
      ].join('\n'),
    );
    const rfc = join(tmp, 'rfc.data');
    await jsonlToPerfData(src, rfc);
    assert.equal((await typeCounts(rfc)).get(19), 2);
    for (const bigEndian of [false, true]) {
      const fin = join(tmp, 'final.data');
      const res = await inject({ input: rfc, output: fin, textPokeAbi: 'rfc', bigEndian });
      assert.equal(res.converted, 2);
      const f = await PerfFile.open(fin);
      assert.equal(attrFlag(f.attrs[0]!.attr, 'text_poke'), true);
      assert.equal(attrFlag(f.attrs[0]!.attr, 'cgroup'), false);
      const pokes = [];
      for await (const raw of f.records()) if (raw.type === 20) pokes.push(raw.decode());
      await f.close();
      assert.equal(pokes.length, 2);
      const p0 = pokes[0]!;
      assert.ok(p0.kind === 'text_poke' && p0.abi !== 'rfc');
      assert.equal(Buffer.from(p0.oldBytes).toString('hex'), '0f1f440000');
      assert.equal(Buffer.from(p0.newBytes).toString('hex'), 'e9fb0f0000');
      if (runPerf(['--version'])) {
        const d = perfOk(['script', '-D', '-i', fin]);
        assert.match(
          d,
          new RegExp(
            String.raw`PERF_RECORD_TEXT_POKE ffffffff81000010 +old len 5 new len 5` +
              String.raw`\n\s+Old bytes: e9 fb 0f 00 00\n\s+New bytes: 0f 1f 44 00 00`,
          ),
        );
        assert.match(perfOk(['report', '--header-only', '-i', fin]), /text_poke = 1/);
      }
      // "after" → "before": strip the pokes again
      const before = join(tmp, 'before.data');
      await inject({ input: fin, output: before, strip: 'text_poke' });
      const c = await typeCounts(before);
      assert.equal(c.get(20), undefined);
      assert.equal(c.get(68), 1);
    }
    void t;
  },
);

test('-i DIR (perf --kcore layout) writes G/data and copies kcore_dir', async () => {
  const dir = join(tmp, 'kcore-in');
  mkdirSync(join(dir, 'kcore_dir'), { recursive: true });
  copyFileSync(fx('recorded/sw.data'), join(dir, 'data'));
  writeFileSync(join(dir, 'kcore_dir', 'kallsyms'), 'ffffffff81000000 T _text\n');
  writeFileSync(join(dir, 'kcore_dir', 'kcore'), Buffer.alloc(64, 7));
  const outDir = join(tmp, 'kcore-out');
  await inject({ input: dir, output: outDir });
  assert.equal(readFileSync(join(outDir, 'kcore_dir', 'kallsyms'), 'utf8'), 'ffffffff81000000 T _text\n');
  assert.deepEqual(readFileSync(join(outDir, 'kcore_dir', 'kcore')), Buffer.alloc(64, 7));
  assert.deepEqual(await typeCounts(join(outDir, 'data')), await typeCounts(join(dir, 'data')));
});

test('-i - reads a pipe-mode stream from stdin in one pass', (t) => {
  const input = fx('recorded/pipe-tp.data');
  const out = join(tmp, 'stdin.data');
  const r = runCli(['inject', '-i', '-', '-o', out], { input: readFileSync(input) });
  assert.equal(r.status, 0, r.stderr);
  if (!needTool(t, 'perf')) return;
  assert.equal(perfOk(['script', '-i', out]), perfOk(['script', '-i', input]));
});

test('usage errors: one line, exit 2', async () => {
  const r = runCli(['inject', '-i', fx('recorded/sw.data'), '-o', join(tmp, 'x.data'), '--strip', 'no_such_type']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown record type 'no_such_type'/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  await assert.rejects(
    inject({ input: fx('recorded/sw.data'), output: join(tmp, 'x.data'), time: 'yesterday' }),
    UsageError,
  );
  await assert.rejects(
    inject({ input: fx('recorded/sw.data'), output: join(tmp, 'x.data'), textPokeAbi: 'v2' }),
    UsageError,
  );
});

test('AUXTRACE payloads survive --strip and the AUXTRACE index is rebuilt for the output offsets', async () => {
  const { PerfDataWriter } = await import('../src/perfdata/writer.js');
  const { readFileFeatures } = await import('../src/perfdata/features/index.js');
  const { withAttrFlag } = await import('../src/abi/event-attr.js');
  const attr = {
    ...emptyAttr(),
    type: 1,
    size: 128,
    config: 9n,
    sampleType: 0x87n,
    flags: withAttrFlag(0n, 'sample_id_all'),
  };
  const input = join(tmp, 'aux-in.data');
  const w = await PerfDataWriter.create(input, [{ attr, ids: [], name: 'dummy' }]);
  const payloads = [new Uint8Array(64).fill(0x11), new Uint8Array(200).fill(0x22), new Uint8Array(8).fill(0x33)];
  for (const [i, p] of payloads.entries()) {
    await w.write({
      kind: 'comm',
      type: 3,
      misc: 0,
      size: 0,
      fileOffset: 0,
      pid: i,
      tid: i,
      comm: `t${i}`,
      sampleId: { pid: i, tid: i, time: BigInt(i), cpu: 0, cpuRes: 0 },
    } as never);
    await w.write({
      kind: 'auxtrace',
      type: 71,
      misc: 0,
      size: 0,
      fileOffset: 0,
      dataSize: BigInt(p.length),
      offset: 0n,
      reference: BigInt(i),
      idx: 0,
      tid: i,
      cpu: 0,
      data: p,
    });
  }
  await w.finish();
  for (const bigEndian of [false, true]) {
    const out = join(tmp, 'aux-out.data');
    const res = await inject({ input, output: out, strip: 'comm', bigEndian });
    assert.equal(res.dropped, 3);
    const f = await PerfFile.open(out);
    const seen: { fileOffset: number; size: number }[] = [];
    const data: string[] = [];
    for await (const r of f.records()) {
      assert.equal(r.type, 71);
      seen.push({ fileOffset: r.fileOffset, size: r.size }); // perf: sz = header.size
      data.push(Buffer.from(r.auxData!).toString('hex'));
    }
    await f.close();
    assert.deepEqual(
      data,
      payloads.map((p) => Buffer.from(p).toString('hex')),
    );
    const ix = (await readFileFeatures(out)).features.find((e) => e.data.kind === 'auxtrace')!.data;
    assert.ok(ix.kind === 'auxtrace');
    assert.deepEqual(ix.entries, seen);
    const inIx = (await readFileFeatures(input)).features.find((e) => e.data.kind === 'auxtrace')!.data;
    assert.ok(inIx.kind === 'auxtrace');
    assert.notDeepEqual(inIx.entries, seen, 'offsets moved when COMM records were dropped');
  }
});
