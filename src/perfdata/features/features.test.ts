import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Feature } from '../../abi/feature.js';
import { FormatError } from '../../io/errors.js';
import { ByteWriter } from '../../io/byte-writer.js';
import { decodeFeature, encodeFeature, readFileFeatures, decodeFeatureTable, type FeatureData } from './index.js';
import { decodeFileHeader, encodeFileHeader } from '../file-header.js';

const dir = join(import.meta.dirname, '../../../test/fixtures/features');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.data'))
  .map((f) => join(dir, f));

test('every feature section of every fixture re-encodes to the same bytes', async () => {
  let n = 0;
  for (const f of fixtures) {
    const ff = await readFileFeatures(f);
    assert.ok(ff.features.length > 10, `${f}: features found`);
    for (const e of ff.features) {
      const again = encodeFeature(e.data, ff.header.le);
      assert.deepEqual(
        Buffer.from(again).toString('hex'),
        Buffer.from(e.bytes).toString('hex'),
        `${f}: feature ${e.id} (${e.data.kind})`,
      );
      n++;
    }
  }
  assert.ok(n > 50);
});

test('byte order swap: decode(encode_be(x)) == x for every section', async () => {
  for (const f of fixtures) {
    const ff = await readFileFeatures(f);
    const nr = ff.features.find((e) => e.id === Feature.NRCPUS)!.data as FeatureData & { kind: 'nrcpus' };
    for (const e of ff.features) {
      if (e.data.kind === 'raw') continue;
      const be = encodeFeature(e.data, false);
      if (
        e.data.kind !== 'branch_stack' &&
        e.data.kind !== 'stat' &&
        e.bytes.some((b) => b !== 0) &&
        e.data.kind !== 'build_id'
      ) {
        assert.notDeepEqual(be, e.bytes, `${f}: ${e.data.kind} big-endian bytes differ from little-endian`);
      }
      assert.deepEqual(decodeFeature(e.id, be, false, 0, { nrCpusAvail: nr.avail }), e.data, `${f}: ${e.data.kind}`);
    }
  }
});

test('truncated sections throw FormatError with an offset, never crash', async () => {
  const ff = await readFileFeatures(fixtures.find((f) => f.endsWith('group-clock.data'))!);
  for (const e of ff.features) {
    if (e.data.kind === 'raw' || e.bytes.length === 0) continue;
    for (const cut of [1, 4, Math.floor(e.bytes.length / 2), e.bytes.length - 1]) {
      if (cut <= 0 || cut >= e.bytes.length) continue;
      try {
        const d = decodeFeature(e.id, e.bytes.subarray(0, cut), true, e.offset, { nrCpusAvail: 2 });
        // a shorter CPU_TOPOLOGY is an older perf's layout, and BUILD_ID may end between entries
        assert.ok(['cpu_topology', 'build_id'].includes(d.kind), `${e.data.kind} cut at ${cut} decoded`);
      } catch (err) {
        assert.ok(err instanceof FormatError, `${e.data.kind} cut at ${cut}: ${String(err)}`);
        assert.ok(
          err.offset >= e.offset && err.offset <= e.offset + e.bytes.length,
          `offset ${err.offset} inside section`,
        );
      }
    }
  }
});

test('a huge count is refused before allocating', () => {
  const w = new ByteWriter(true);
  w.u32(0xffffffff).u32(64);
  assert.throws(
    () => decodeFeature(Feature.CMDLINE, w.finish(), true),
    (e: unknown) => e instanceof FormatError && e.kind === 'bad-size',
  );
  assert.throws(
    () => decodeFeature(Feature.EVENT_DESC, w.finish(), true),
    (e: unknown) => e instanceof FormatError && e.kind === 'bad-size',
  );
  const m = new ByteWriter(true)
    .u64(1)
    .u64(4096)
    .u64(1n << 60n)
    .finish();
  assert.throws(() => decodeFeature(Feature.MEM_TOPOLOGY, m, true), FormatError);
});

test('CACHE, CLOCK_DATA and MEM_TOPOLOGY with a version other than 1 are refused at the version word', () => {
  const cases: [number, string, Uint8Array][] = [
    [Feature.CACHE, 'CACHE version', new ByteWriter(true).u32(2).u32(0).finish()],
    [Feature.CLOCK_DATA, 'CLOCK_DATA version', new ByteWriter(true).u32(2).u32(1).u64(0n).u64(0n).finish()],
    [Feature.MEM_TOPOLOGY, 'MEM_TOPOLOGY version', new ByteWriter(true).u64(2n).u64(0n).u64(0n).finish()],
  ];
  for (const [id, structure, bytes] of cases) {
    assert.throws(
      () => decodeFeature(id, bytes, true),
      (e: unknown) =>
        e instanceof FormatError && e.kind === 'unsupported' && e.offset === 0 && e.info.structure === structure,
      structure,
    );
    // the same section at version 1 decodes
    const ok = bytes.slice();
    ok[0] = 1;
    assert.equal(
      decodeFeature(id, ok, true).kind,
      id === Feature.CACHE ? 'cache' : id === Feature.CLOCK_DATA ? 'clock_data' : 'mem_topology',
    );
  }
});

test('a feature table entry pointing past the end names the table offset', () => {
  const w = new ByteWriter(true);
  encodeFileHeader(w, {
    attrSize: 0,
    attrs: { offset: 104, size: 0 },
    data: { offset: 104, size: 0 },
    eventTypes: { offset: 0, size: 0 },
    features: [Feature.HOSTNAME],
  });
  w.u64(120).u64(0x1000);
  const bytes = w.finish();
  const h = decodeFileHeader(bytes, bytes.length);
  assert.throws(
    () => decodeFeatureTable(bytes.subarray(104), h, bytes.length),
    (e: unknown) => e instanceof FormatError && e.offset === 104 && /HOSTNAME/.test(e.message),
  );
});

test('unknown feature ids are kept as raw bytes', () => {
  const d = decodeFeature(200, new Uint8Array([1, 2, 3]), true);
  assert.deepEqual(d, { kind: 'raw', id: 200, bytes: new Uint8Array([1, 2, 3]) });
  assert.deepEqual(encodeFeature(d, false), new Uint8Array([1, 2, 3]));
});

test('property: string and list features round-trip in both orders', () => {
  const str = fc.string({ maxLength: 100 }).filter((s) => !s.includes('\0'));
  fc.assert(
    fc.property(
      fc.boolean(),
      fc.array(str, { maxLength: 8 }),
      fc.array(
        fc.record({ type: fc.nat(0xffffffff), name: str }).map((p) => ({ ...p })),
        { maxLength: 5 },
      ),
      (le, argv, pmus) => {
        for (const f of [
          { kind: 'cmdline', argv },
          { kind: 'pmu_mappings', pmus },
          { kind: 'hostname', value: argv[0] ?? '' },
        ] as FeatureData[]) {
          const id =
            f.kind === 'cmdline'
              ? Feature.CMDLINE
              : f.kind === 'pmu_mappings'
                ? Feature.PMU_MAPPINGS
                : Feature.HOSTNAME;
          assert.deepEqual(decodeFeature(id, encodeFeature(f, le), le), f);
        }
      },
    ),
  );
});

test('property: random bytes in any feature section decode or throw FormatError, never anything else', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      fc.uint8Array({ maxLength: 300 }),
      fc.boolean(),
      fc.option(fc.nat(64), { nil: undefined }),
      (id, bytes, le, nrCpusAvail) => {
        try {
          const d = decodeFeature(id, bytes, le, 0x1000, { nrCpusAvail });
          // whatever decoded must encode again without throwing
          encodeFeature(d, le);
        } catch (e) {
          assert.ok(e instanceof FormatError, `feature ${id}: ${String(e)}`);
          assert.ok(
            e.offset >= 0x1000 && e.offset <= 0x1000 + bytes.length,
            `offset 0x${e.offset.toString(16)} inside the section`,
          );
        }
      },
    ),
    { numRuns: 3000 },
  );
});
