/**
 * PerfFile on real recordings (perf 6.1) and on broken copies of them:
 * record counts and kinds equal what perf script -D sees; every record
 * re-encodes to its own bytes (and survives a trip through big-endian);
 * pipe mode from a stream equals pipe mode from a file; small windows give
 * the same records; every corruption is a FormatError, never a crash or hang.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync, createReadStream } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runPerf, repoRoot } from './cli.js';
import { PerfFile, attrLayout, decodeRecord, encodeRecordBytes, type RawRecord } from '../src/perfdata/index.js';
import { FormatError } from '../src/io/errors.js';
import { RecordType } from '../src/abi/record-type.js';
import { perfEventName } from '../src/format/perf-event-text.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'recorded');
const recorded = readdirSync(fixtures)
  .filter((n) => n.endsWith('.data'))
  .sort();

async function collect(f: PerfFile, opts?: Parameters<PerfFile['records']>[0]): Promise<RawRecord[]> {
  const out: RawRecord[] = [];
  for await (const r of f.records(opts)) out.push(r.copy());
  return out;
}

for (const name of recorded) {
  test(`${name}: the records perf -D sees, each re-encoding to its own bytes in both orders`, async (t) => {
    const f = await PerfFile.open(join(fixtures, name));
    const recs = await collect(f);
    await f.close();
    const perf = runPerf(['script', '-D', '-i', name], { cwd: fixtures });
    if (perf && perf.status === 0) {
      const names = perf.stdout
        .split('\n')
        .flatMap((l) => /^(?:\S+ )*[0-9a-fx]+ \[0x[0-9a-f]+\]: PERF_RECORD_([A-Z0-9_]+)/.exec(l)?.slice(1) ?? []);
      const ours = recs.map((r) => perfEventName(r.type));
      assert.deepEqual([...ours].sort(), [...names].sort(), 'same multiset of record kinds');
    } else t.diagnostic('perf 6.1 not available: kinds not compared');
    for (const r of recs) {
      const d = r.decode();
      assert.equal(d.fileOffset, r.fileOffset);
      const le = encodeRecordBytes(d, f.le, { layout: r.layout });
      assert.deepEqual(le, r.bytes, `${d.kind} at 0x${r.fileOffset.toString(16)} re-encodes`);
      // the same record written big-endian reads back to the same object
      const beLayout = r.layout && attrLayout(r.layout.attr, false);
      const be = encodeRecordBytes(d, false, { layout: beLayout });
      const back = decodeRecord(be, r.fileOffset, { le: false, layout: beLayout, textPokeAbi: 'final' });
      // (the payload after AUXTRACE/TRACING_DATA is not part of the record)
      const plain = d.kind === 'tracing_data' || d.kind === 'auxtrace' ? { ...d, data: undefined } : d;
      if (back.kind === 'tracing_data' || back.kind === 'auxtrace') back.data = undefined;
      assert.deepEqual(back, plain, `${d.kind} survives big-endian`);
      // timestamp() reads the same time decode() finds
      const time = d.kind === 'sample' ? d.time : 'sampleId' in d ? d.sampleId?.time : undefined;
      assert.equal(r.timestamp(), time, `${d.kind} timestamp`);
    }
  });
}

test('group.data: samples of two attrs are told apart by id (evlist__event2evsel)', async () => {
  const f = await PerfFile.open(join(fixtures, 'group.data'));
  assert.equal(f.attrs.length, 2);
  const byAttr = new Map<unknown, number>();
  for await (const r of f.records()) {
    if (r.type !== RecordType.SAMPLE) continue;
    const d = r.decode();
    assert.equal(d.kind, 'sample');
    if (d.kind !== 'sample') continue;
    assert.equal(f.attrForId(d.id!)?.attr, r.layout?.attr, 'the layout used is the attr owning the id');
    byAttr.set(r.layout?.attr, (byAttr.get(r.layout?.attr) ?? 0) + 1);
  }
  await f.close();
  assert.equal(byAttr.size, 2, 'both attrs have samples');
});

test('pipe mode: a stream and a file give the same records; features and attrs are learned', async () => {
  const a = await PerfFile.open(join(fixtures, 'pipe-tp.data'));
  const fromFile = await collect(a);
  const b = await PerfFile.fromStream(createReadStream(join(fixtures, 'pipe-tp.data'), { highWaterMark: 1000 }));
  const fromStream = await collect(b);
  assert.equal(fromStream.length, fromFile.length);
  fromStream.forEach((r, i) => {
    assert.equal(r.fileOffset, fromFile[i]!.fileOffset);
    assert.deepEqual(r.bytes, fromFile[i]!.bytes);
  });
  assert.ok(b.pipe && b.attrs.length === 1, 'HEADER_ATTR filled attrs');
  assert.ok((await b.readFeature(3))!.length > 0, 'HEADER_FEATURE hostname kept');
  const td = fromStream.find((r) => r.type === RecordType.HEADER_TRACING_DATA)!;
  const dec = td.decode();
  assert.equal(dec.kind, 'tracing_data');
  if (dec.kind === 'tracing_data')
    assert.equal(dec.data?.length, dec.dataSize, 'the tracing data after the record is handed over');
  await a.close();
});

test('tiny windows (records straddling every boundary) give the same records', async () => {
  for (const name of ['switch.data', 'zstd.data', 'pipe-tp.data']) {
    const a = await PerfFile.open(join(fixtures, name));
    const b = await PerfFile.open(join(fixtures, name), { windowSize: 97 });
    const ra = await collect(a);
    const rb = await collect(b);
    assert.equal(rb.length, ra.length, name);
    rb.forEach((r, i) => {
      assert.deepEqual(r.bytes, ra[i]!.bytes, `${name} record ${i}`);
    });
    await a.close();
    await b.close();
  }
});

test(
  'zstd.data: COMPRESSED records expand in place (offset of the COMPRESSED record) or stay raw on ' + 'request',
  async () => {
    const f = await PerfFile.open(join(fixtures, 'zstd.data'));
    const expanded = await collect(f);
    const raw = await collect(f, { compressed: 'raw' });
    await f.close();
    const comp = raw.filter((r) => r.type === RecordType.COMPRESSED);
    assert.ok(comp.length > 0);
    assert.ok(!expanded.some((r) => r.type === RecordType.COMPRESSED));
    const inner = expanded.filter((r) => r.compressedIn === RecordType.COMPRESSED);
    assert.ok(inner.length > 50);
    const offsets = new Set(comp.map((r) => r.fileOffset));
    assert.ok(inner.every((r) => offsets.has(r.fileOffset)));
  },
);

// ---- corruption ----

async function readAll(path: string): Promise<number> {
  const f = await PerfFile.open(path);
  let n = 0;
  try {
    for await (const r of f.records()) {
      r.decode();
      r.timestamp();
      n++;
    }
    for (const id of f.features.keys()) await f.readFeature(id);
  } finally {
    await f.close();
  }
  return n;
}

function withTmp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = tempDir('perfpoke-reader-');
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function expectFormatError(bytes: Uint8Array, re: RegExp): Promise<FormatError> {
  return withTmp(async (dir) => {
    const p = join(dir, 'bad.data');
    writeFileSync(p, bytes);
    try {
      await readAll(p);
    } catch (e) {
      assert.ok(e instanceof FormatError, String(e));
      assert.match(e.message, re);
      assert.ok(e.message.startsWith(`${p}: at offset 0x`), e.message);
      return e;
    }
    assert.fail(`no error, expected ${re}`);
  });
}

const sw = () => new Uint8Array(readFileSync(join(fixtures, 'sw.data')));

test('header.size 0 in the data section: FormatError, not an endless loop', async () => {
  const b = sw();
  new DataView(b.buffer).setUint16(0x158 + 6, 0, true);
  await expectFormatError(b, /at offset 0x158: MMAP \(1\) perf_event_header.size: size 0, expected ≥ 8/);
});

test('record size past the end of the data section: truncated, naming the record', async () => {
  const b = sw();
  const dv = new DataView(b.buffer);
  const dataEnd = Number(dv.getBigUint64(40, true) + dv.getBigUint64(48, true));
  // the last record is FINISHED_ROUND (8 bytes): claim it is longer
  dv.setUint16(dataEnd - 8 + 6, 64, true);
  await expectFormatError(
    b,
    /at offset 0x[0-9a-f]+: FINISHED_ROUND \(68\): truncated \(only 8 left in the data section\), expected 64 bytes/,
  );
});

test('feature section outside the file: FormatError at its table entry', async () => {
  const b = sw();
  const dv = new DataView(b.buffer);
  const table = Number(dv.getBigUint64(40, true) + dv.getBigUint64(48, true));
  dv.setBigUint64(table, 1n << 40n, true);
  await expectFormatError(b, new RegExp(`at offset 0x${table.toString(16)}: feature section \\w+: size`));
});

test('data section past the end of the file, and a truncated file: FormatError', async () => {
  const b = sw();
  new DataView(b.buffer).setBigUint64(48, 1n << 30n, true);
  await expectFormatError(b, /at offset 0x28: perf_file_header.data: size/);
  await expectFormatError(sw().subarray(0, 60), /perf_file_header: truncated/);
  await expectFormatError(new Uint8Array(0), /perf_file_header: truncated/);
});

test('AUXTRACE claiming 2^52 bytes of payload: FormatError before any allocation', async () => {
  const b = Buffer.from(readFileSync(join(fixtures, 'pipe.data')));
  // append an AUXTRACE record with a huge size to the pipe file
  const rec = Buffer.alloc(48);
  rec.writeUInt32LE(RecordType.AUXTRACE, 0);
  rec.writeUInt16LE(48, 6);
  rec.writeBigUInt64LE(1n << 52n, 8);
  await expectFormatError(
    Buffer.concat([b, rec]),
    /AUXTRACE \(71\) payload: size 4503599627370496, expected ≤ 0 bytes left in the file/,
  );
});

test('fast-check: random byte flips and truncations of real files end in success or FormatError, quickly', async () => {
  const files = ['sw.data', 'pipe.data', 'zstd.data', 'dwarf.data', 'group.data'].map(
    (n) => new Uint8Array(readFileSync(join(fixtures, n))),
  );
  await withTmp(async (dir) => {
    let i = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: files.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        async (which, flips, cut) => {
          const src = files[which]!;
          const b = src.slice(0, cut === undefined ? src.length : cut % (src.length + 1));
          for (const [at, v] of flips) if (b.length) b[at % b.length] = v;
          const p = join(dir, `m${i++}.data`);
          writeFileSync(p, b);
          const t0 = performance.now();
          try {
            await readAll(p);
          } catch (e) {
            if (!(e instanceof FormatError)) throw e;
          }
          assert.ok(performance.now() - t0 < 2000, 'bounded time');
        },
      ),
      { numRuns: 150 },
    );
  });
});

test(
  'attr names come from EVENT_DESC (file) or EVENT_UPDATE/HEADER_FEATURE (pipe), as perf evlist lists ' + 'them',
  async (t) => {
    for (const name of ['group.data', 'tp.data', 'pipe.data']) {
      const perf = runPerf(['evlist', '-i', name], { cwd: fixtures });
      if (perf?.status !== 0) return cannotCompare(t, 'perf 6.1 not available');
      const f = await PerfFile.open(join(fixtures, name));
      for await (const _ of f.records()) void _;
      await f.close();
      assert.deepEqual(
        f.attrs.map((a) => a.name),
        perf.stdout
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('#')),
        name,
      );
    }
  },
);

test('records({ from }) starts at a record boundary inside the data section', async () => {
  const f = await PerfFile.open(join(fixtures, 'sw.data'));
  const all = await collect(f);
  const mid = all[Math.floor(all.length / 2)]!;
  const tail = await collect(f, { from: mid.fileOffset });
  await f.close();
  assert.equal(tail.length, all.length - Math.floor(all.length / 2));
  tail.forEach((r, i) => {
    assert.deepEqual(r.bytes, all[Math.floor(all.length / 2) + i]!.bytes);
  });
});
