import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RecordType } from '../abi/record-type.js';
import { PerfFile } from './perf-file.js';
import { copyPerfData } from './writer-copy.js';
import { PerfDataWriter } from './writer.js';
import { readFileFeatures } from './features/index.js';
import { encodeRecordBytes, type PerfRecord } from './records/index.js';
import { tempDir } from '../../test/temp-dir.js';

const root = join(import.meta.dirname, '../..');
function fixtures(): string[] {
  const out: string[] = [];
  for (const d of ['test/fixtures/recorded', 'test/fixtures/features']) {
    const dir = join(root, d);
    if (existsSync(dir)) for (const f of readdirSync(dir)) if (f.endsWith('.data')) out.push(join(dir, f));
  }
  return out;
}
const tmp = tempDir('perfpoke-writer-');
// pipe-only records; tracing data becomes the TRACING_DATA feature in file mode
const PIPE_ONLY = new Set<number>([
  RecordType.HEADER_ATTR,
  RecordType.HEADER_EVENT_TYPE,
  RecordType.HEADER_FEATURE,
  RecordType.HEADER_TRACING_DATA,
]);

/** Decoded records without their file offsets (which a copy changes). */
async function decodedRecords(path: string, dropPipeOnly: boolean): Promise<unknown[]> {
  const f = await PerfFile.open(path);
  const out: unknown[] = [];
  try {
    for await (const r of f.records()) {
      if (dropPipeOnly && PIPE_ONLY.has(r.type)) continue;
      const { fileOffset: _x, ...rest } = r.decode() as unknown as Record<string, unknown>;
      out.push(rest);
    }
  } finally {
    await f.close();
  }
  return out;
}

test('read → write → read gives identical decoded records, both byte orders, every fixture', async () => {
  const files = fixtures();
  assert.ok(files.length >= 10);
  for (const f of files) {
    const want = await decodedRecords(f, true);
    for (const bigEndian of [false, true]) {
      const out = join(tmp, `rt-${bigEndian ? 'be' : 'le'}.data`);
      await copyPerfData(f, out, { bigEndian });
      const got = await decodedRecords(out, false);
      assert.equal(got.length, want.length, `${f} ${bigEndian ? 'BE' : 'LE'}: record count`);
      assert.deepEqual(got, want, `${f} ${bigEndian ? 'BE' : 'LE'}`);
      const of = await PerfFile.open(out);
      assert.equal(of.le, !bigEndian);
      await of.close();
      // features survive (re-encoded when the order changed)
      const a = await readFileFeatures(f);
      const b = await readFileFeatures(out);
      for (const e of a.features) {
        if (['event_desc', 'compressed', 'sample_time'].includes(e.data.kind)) continue;
        // opaque bpf sections are dropped when swapping
        if (bigEndian && e.data.kind === 'raw' && (e.id === 25 || e.id === 26)) continue;
        const o = b.features.find((x) => x.id === e.id);
        assert.ok(o, `${f}: feature ${e.id} copied`);
        assert.deepEqual(o.data, e.data, `${f}: feature ${e.id}`);
        if (!bigEndian) assert.deepEqual(o.bytes, e.bytes, `${f}: feature ${e.id} copied byte for byte`);
      }
    }
  }
});

test('padRecords: readers honour header.size (records grow, decoded bodies stay)', async () => {
  const f = join(root, 'test/fixtures/recorded/switch.data');
  const out = join(tmp, 'pad.data');
  await copyPerfData(f, out, { padRecords: 16 });
  const pf = await PerfFile.open(out);
  let grown = 0;
  const got: unknown[] = [];
  for await (const r of pf.records()) {
    const { fileOffset: _x, size, ...rest } = r.decode() as unknown as Record<string, unknown>;
    if (r.type < 64) grown++;
    got.push(rest);
    void size;
  }
  await pf.close();
  const want = (await decodedRecords(f, true)).map((x) => {
    const { size: _s, ...rest } = x as Record<string, unknown>;
    return rest;
  });
  assert.ok(grown > 10);
  assert.deepEqual(got, want);
});

test('AUXTRACE index describes the output: offset and size of each AUXTRACE record', async () => {
  const attrFile = join(root, 'test/fixtures/features/basic.data');
  const pf = await PerfFile.open(attrFile);
  const attrs = pf.attrs.map((a) => ({ attr: a.attr, ids: a.ids, name: 'cpu-clock' }));
  await pf.close();
  for (const bigEndian of [false, true]) {
    const out = join(tmp, 'aux.data');
    const w = await PerfDataWriter.create(out, attrs, { bigEndian });
    // the second payload is larger than the writer's 1 MiB buffer
    const payloads = [
      new Uint8Array(24).fill(1),
      new Uint8Array(1_200_000).map((_, i) => i & 0xff),
      new Uint8Array(40).fill(2),
    ];
    await w.write({ kind: 'finished_round', type: RecordType.FINISHED_ROUND, misc: 0, size: 0, fileOffset: 0 });
    for (const [i, p] of payloads.entries()) {
      await w.write({
        kind: 'auxtrace',
        type: RecordType.AUXTRACE,
        misc: 0,
        size: 0,
        fileOffset: 0,
        dataSize: BigInt(p.length),
        offset: BigInt(i * 100),
        reference: 7n,
        idx: i,
        tid: 1,
        cpu: 0,
        data: p,
      });
    }
    await w.finish();
    const ff = await readFileFeatures(out);
    const ix = ff.features.find((e) => e.data.kind === 'auxtrace')!.data;
    assert.equal(ix.kind, 'auxtrace');
    const f2 = await PerfFile.open(out);
    const seen: { fileOffset: number; size: number }[] = [];
    const datas: Uint8Array[] = [];
    for await (const r of f2.records()) {
      if (r.type !== RecordType.AUXTRACE) continue;
      seen.push({ fileOffset: r.fileOffset, size: r.size }); // perf: sz = header.size
      datas.push(r.auxData!.slice());
    }
    await f2.close();
    assert.deepEqual(ix.entries, seen);
    assert.equal(seen.length, 3);
    assert.deepEqual(datas, payloads);
  }
});

test('a failed write leaves an existing output untouched and no temporary file', async () => {
  const out = join(tmp, 'keep.data');
  writeFileSync(out, 'precious');
  const pf = await PerfFile.open(join(root, 'test/fixtures/features/basic.data'));
  const attrs = pf.attrs.map((a) => ({ attr: a.attr, ids: a.ids }));
  await pf.close();
  const w = await PerfDataWriter.create(out, attrs);
  await w.write({ kind: 'finished_round', type: RecordType.FINISHED_ROUND, misc: 0, size: 0, fileOffset: 0 });
  // a record too big for header.size's u16
  await assert.rejects(
    w.write({ kind: 'unknown', type: 99, misc: 0, size: 0, fileOffset: 0, bytes: new Uint8Array(70000) }),
  );
  await w.abort();
  assert.equal(readFileSync(out, 'utf8'), 'precious');
  assert.deepEqual(
    readdirSync(tmp).filter((f) => f.includes('.tmp-')),
    [],
  );
});

test(
  'the synchronous API writes the async bytes: records in one block, or a tail appended by another ' + 'writer',
  async () => {
    const pf = await PerfFile.open(join(root, 'test/fixtures/features/basic.data'));
    const attrs = pf.attrs.map((a) => ({ attr: a.attr, ids: a.ids, name: 'cpu-clock' }));
    await pf.close();
    const head = { misc: 0, size: 0, fileOffset: 0 };
    const payload = new Uint8Array(4000).map((_, i) => (i * 7) & 0xff);
    const recs: PerfRecord[] = [
      { kind: 'finished_round', type: RecordType.FINISHED_ROUND, ...head },
      {
        kind: 'auxtrace',
        type: RecordType.AUXTRACE,
        ...head,
        dataSize: BigInt(payload.length),
        offset: 0n,
        reference: 1n,
        idx: 0,
        tid: 1,
        cpu: 0,
        data: payload,
      },
      { kind: 'unknown', type: 99, ...head, bytes: new Uint8Array(16).fill(3) },
      { kind: 'finished_round', type: RecordType.FINISHED_ROUND, ...head },
    ];
    const asyncOut = join(tmp, 'async.data');
    const a = await PerfDataWriter.create(asyncOut, attrs);
    for (const r of recs) await a.write(r);
    const asyncSize = await a.finish();
    assert.equal(asyncSize, statSync(asyncOut).size);

    // one block of whole records, the AUXTRACE payload after its record (as the recorder's chunks are)
    const parts = recs.flatMap((r) =>
      r.kind === 'auxtrace' ? [encodeRecordBytes(r, true), payload] : [encodeRecordBytes(r, true)],
    );
    const block = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      block.set(p, at);
      at += p.length;
    }
    const blockOut = join(tmp, 'block.data');
    const b = PerfDataWriter.createFile(blockOut, attrs);
    b.writeRecordsSync(block);
    assert.equal(b.finishSync(), asyncSize);
    assert.deepEqual(readFileSync(blockOut), readFileSync(asyncOut));
    // a block that ends inside a record is refused
    const bad = PerfDataWriter.createFile(join(tmp, 'bad.data'), attrs);
    assert.throws(() => bad.writeRecordsSync(block.subarray(0, block.length - 12)), /bad record size 24 at 4056/);
    assert.throws(() => bad.writeRecordsSync(block.subarray(0, 100)), /AUXTRACE payload at 56 ends past the block/);
    bad.abortSync();

    // without the AUXTRACE record, the tail can be appended through the file descriptor (the native recorder's way)
    const plain = recs.filter((r) => r.kind !== 'auxtrace').map((r) => encodeRecordBytes(r, true));
    const whole = join(tmp, 'whole.data');
    const c = PerfDataWriter.createFile(whole, attrs);
    for (const p of plain) c.writeBytesSync(p);
    c.finishSync();
    const appended = join(tmp, 'appended.data');
    const d = PerfDataWriter.createFile(appended, attrs);
    d.writeBytesSync(plain[0]!);
    const t = d.appendTarget();
    let end = t.offset;
    for (const p of plain.slice(1)) end += writeSync(t.fd, p, 0, p.length, end);
    d.appendedUpTo(end);
    assert.throws(() => d.appendedUpTo(end - 8), /before/);
    d.finishSync();
    assert.deepEqual(readFileSync(appended), readFileSync(whole));
    assert.deepEqual(
      readdirSync(tmp).filter((f) => f.includes('.tmp-')),
      [],
    );
  },
);
