/**
 * Every record kind: encode → decode → equal → encode → identical bytes, in
 * both byte orders; every truncation of the body fails with a FormatError at
 * an offset inside the record; unknown types never throw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord, encodeRecordBytes, recordTable, type PerfRecord } from './index.js';
import { attrLayout } from '../layout.js';
import { FormatError } from '../../io/errors.js';
import { RecordType, PERF_RECORD_MISC_KERNEL } from '../../abi/record-type.js';
import { emptyAttr, withAttrFlag } from '../../abi/event-attr.js';
import { SampleType, ReadFormat, PERF_SAMPLE_BRANCH_HW_INDEX } from '../../abi/sample-format.js';
import { kernelRecords, fullSamples, userRecords, trackingAttr, fullSampleAttr } from '../../../test/reader-synth.js';

const h = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });
const b = (...x: number[]) => new Uint8Array(x);

/** Records the synthetic perf files do not hold: the rest of perf's user records and READ. */
function moreRecords(): PerfRecord[] {
  const attr = fullSampleAttr();
  return [
    { kind: 'header_attr', ...h(RecordType.HEADER_ATTR), attr: { ...attr, size: 136 }, ids: [1n, 2n, 3n] },
    { kind: 'header_event_type', ...h(RecordType.HEADER_EVENT_TYPE), eventId: 7n, name: 'sched:sched_switch' },
    { kind: 'tracing_data', ...h(RecordType.HEADER_TRACING_DATA), dataSize: 4096 },
    {
      kind: 'build_id',
      ...h(RecordType.HEADER_BUILD_ID, PERF_RECORD_MISC_KERNEL | (1 << 15)),
      pid: -1,
      buildId: b(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20),
      buildIdRaw: new Uint8Array(24),
      filename: '[kernel.kallsyms]',
      filenameSize: 64,
    },
    { kind: 'finished_round', ...h(RecordType.FINISHED_ROUND) },
    {
      kind: 'id_index',
      ...h(RecordType.ID_INDEX),
      entries: [{ id: 5n, idx: 0n, cpu: 1n, tid: 2n, machinePid: 0n, vcpu: 3n }],
    },
    { kind: 'auxtrace_info', ...h(RecordType.AUXTRACE_INFO), auxType: 1, priv: [1n, 2n, 0xffffffffffffffffn] },
    {
      kind: 'auxtrace',
      ...h(RecordType.AUXTRACE),
      dataSize: 0x4000n,
      offset: 0x1000n,
      reference: 0x1234567890n,
      idx: 1,
      tid: 42,
      cpu: -1,
    },
    {
      kind: 'auxtrace_error',
      ...h(RecordType.AUXTRACE_ERROR),
      errType: 1,
      code: 6,
      cpu: 1,
      pid: 42,
      tid: 43,
      fmt: 2,
      ip: 0xffffffff81000000n,
      time: 99n,
      msg: 'Overflow packet',
      machinePid: 0,
      vcpu: 0,
    },
    {
      kind: 'stat_config',
      ...h(RecordType.STAT_CONFIG),
      entries: [
        { tag: 0n, val: 2n },
        { tag: 1n, val: 1000n },
      ],
    },
    { kind: 'stat', ...h(RecordType.STAT), id: 9n, cpu: 1, thread: 0, val: 100n, ena: 200n, run: 150n },
    { kind: 'stat_round', ...h(RecordType.STAT_ROUND), roundType: 1n, time: 12345n },
    {
      kind: 'event_update',
      ...h(RecordType.EVENT_UPDATE),
      updateType: 3n,
      id: 9n,
      cpus: { type: 2, anyCpu: false, startCpu: 0, endCpu: 3, cpus: [0, 1, 2, 3] },
      dataSize: 8,
    },
    { kind: 'cpu_map', ...h(RecordType.CPU_MAP), data: { type: 1, longSize: 4, mask: [0x5n, 0x1n], cpus: [0, 2, 32] } },
    {
      kind: 'time_conv',
      ...h(RecordType.TIME_CONV),
      timeShift: 31n,
      timeMult: 1234n,
      timeZero: 99n,
      timeCycles: 5n,
      timeMask: 0xffffn,
      capUserTimeZero: 1,
      capUserTimeShort: 0,
    },
    { kind: 'time_conv', ...h(RecordType.TIME_CONV), timeShift: 31n, timeMult: 1234n, timeZero: 99n },
    { kind: 'header_feature', ...h(RecordType.HEADER_FEATURE), featId: 3, data: b(4, 0, 0, 0, 0x61, 0x62, 0x63, 0) },
    { kind: 'compressed', ...h(RecordType.COMPRESSED), data: b(0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4) },
    { kind: 'compressed2', ...h(RecordType.COMPRESSED2), data: b(0x28, 0xb5, 0x2f, 0xfd, 9) },
    { kind: 'unknown', ...h(99), bytes: b(1, 2, 3, 4, 5, 6, 7, 8) },
    { kind: 'unknown', ...h(45), bytes: b(9, 9, 9, 9, 9, 9, 9, 9) },
  ];
}

function readAttr() {
  const a = emptyAttr();
  a.sampleType = SampleType.TID | SampleType.TIME | SampleType.ID;
  a.readFormat = ReadFormat.TOTAL_TIME_ENABLED | ReadFormat.TOTAL_TIME_RUNNING | ReadFormat.ID | ReadFormat.LOST;
  a.flags = withAttrFlag(0n, 'sample_id_all');
  return a;
}

function branchAttr() {
  const a = emptyAttr();
  a.sampleType = SampleType.IP | SampleType.BRANCH_STACK | SampleType.WEIGHT_STRUCT | SampleType.AUX;
  a.branchSampleType = PERF_SAMPLE_BRANCH_HW_INDEX;
  return a;
}

interface Case {
  rec: PerfRecord;
  attr?: ReturnType<typeof emptyAttr>;
}

function cases(): Case[] {
  const track = trackingAttr();
  const full = fullSampleAttr();
  return [
    ...kernelRecords().map((rec) => ({ rec, attr: track })),
    ...fullSamples().map((rec) => ({ rec, attr: full })),
    ...userRecords().map((rec) => ({ rec })),
    ...moreRecords().map((rec) => ({ rec })),
    {
      rec: {
        kind: 'read',
        ...h(RecordType.READ),
        pid: 1,
        tid: 2,
        read: { group: false, timeEnabled: 10n, timeRunning: 9n, values: [{ value: 77n, id: 5n, lost: 1n }] },
        sampleId: { pid: 1, tid: 2, time: 50n, id: 5n },
      } as PerfRecord,
      attr: readAttr(),
    },
    {
      rec: {
        kind: 'sample',
        ...h(RecordType.SAMPLE),
        ip: 0x1000n,
        branchStack: {
          hwIdx: 3n,
          entries: [
            { from: 1n, to: 2n, flags: 0x13n },
            { from: 3n, to: 4n, flags: 0n },
          ],
        },
        weight: (7n << 48n) | (5n << 32n) | 100n,
        aux: b(1, 2, 3, 4, 5, 6, 7, 8),
      } as PerfRecord,
      attr: branchAttr(),
    },
  ];
}

/** The decoded form as encode produced it (size and offset filled by the reader). */
function normalize(r: PerfRecord): unknown {
  // buildIdRaw is the decoder's copy of the whole 20/24-byte field (kept for exact re-encoding)
  const { buildIdRaw: _raw, ...rest } = r as PerfRecord & { buildIdRaw?: Uint8Array };
  return { ...rest, size: 0, fileOffset: 0 };
}

for (const le of [true, false]) {
  test(`every record kind round-trips (${le ? 'little' : 'big'}-endian)`, () => {
    const seen = new Set<number>();
    for (const { rec, attr } of cases()) {
      const layout = attr ? attrLayout(attr, le) : undefined;
      const bytes = encodeRecordBytes(rec, le, { layout });
      // perf keeps records 8-aligned, except HEADER_BUILD_ID: a 36-byte head then the NAME_ALIGNed file name
      const align = rec.kind === 'build_id' ? (36 + (rec.filenameSize ?? 0)) % 8 : 0;
      assert.equal(bytes.length % 8, align, `${rec.kind}: ${bytes.length} bytes`);
      const size = new DataView(bytes.buffer, bytes.byteOffset).getUint16(6, le);
      assert.equal(size, bytes.length, `${rec.kind}: header.size is the encoded length`);
      const back = decodeRecord(bytes, 0x1000, { le, layout, textPokeAbi: 'final' });
      assert.equal(back.size, bytes.length);
      assert.equal(back.fileOffset, 0x1000);
      assert.deepEqual(normalize(back), normalize(rec), rec.kind);
      assert.deepEqual(encodeRecordBytes(back, le, { layout }), bytes, `${rec.kind}: re-encoding gives the same bytes`);
      seen.add(rec.type);
    }
    for (const type of recordTable.keys()) assert.ok(seen.has(type), `type ${type} has a round-trip case`);
  });
}

/** Kinds whose body is opaque bytes: every length decodes. */
const OPAQUE = new Set(['unknown', 'compressed']);

test('a truncated record body is a FormatError at an offset inside the record, or decodes to its own size', () => {
  for (const { rec, attr } of cases()) {
    const layout = attr ? attrLayout(attr, true) : undefined;
    const bytes = encodeRecordBytes(rec, true, { layout });
    let refused = 0;
    for (let n = 8; n < bytes.length; n++) {
      const cut = bytes.slice(0, n);
      new DataView(cut.buffer).setUint16(6, n, true);
      let back: PerfRecord | undefined;
      try {
        back = decodeRecord(cut, 0x2000, { le: true, layout, textPokeAbi: 'final' });
      } catch (e) {
        assert.ok(e instanceof FormatError, `${rec.kind} cut at ${n}: ${String(e)}`);
        assert.ok(
          e.offset >= 0x2000 && e.offset <= 0x2000 + n,
          `${rec.kind} cut at ${n}: offset 0x${e.offset.toString(16)}`,
        );
        refused++;
        continue;
      }
      // a cut the decoder accepts (a shorter name, fewer optional fields) is still this record, n bytes long
      assert.equal(back.kind, rec.kind, `${rec.kind} cut at ${n}`);
      assert.equal(back.size, n, `${rec.kind} cut at ${n}: size`);
    }
    // fixed fields cannot be cut away: only opaque bodies (and empty ones) take every length
    if (bytes.length > 8) assert.equal(refused > 0, !OPAQUE.has(rec.kind), `${rec.kind}: ${refused} cuts refused`);
  }
});

test('TEXT_POKE with old_len + new_len past the record: FormatError naming the old_len field offset', () => {
  const layout = attrLayout(trackingAttr(), true);
  const poke = kernelRecords().find((r) => r.kind === 'text_poke')!;
  const bytes = encodeRecordBytes(poke, true, { layout });
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  dv.setUint16(16, 0x7fff, true); // old_len
  assert.throws(
    () => decodeRecord(bytes, 0x5000, { le: true, layout, textPokeAbi: 'final' }),
    (e: unknown) =>
      e instanceof FormatError &&
      e.offset === 0x5010 &&
      /TEXT_POKE \(20\): old_len \+ new_len: size 32772, expected ≤ \d+ bytes left/.test(e.message),
  );
});

test('an unknown type decodes as {kind: unknown} with its bytes, whatever they hold', () => {
  const bytes = new Uint8Array(24).fill(0xee);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(0, 250, true);
  dv.setUint16(4, 0, true);
  dv.setUint16(6, 24, true);
  const r = decodeRecord(bytes, 0, { le: true, layout: attrLayout(trackingAttr(), true), textPokeAbi: 'final' });
  assert.equal(r.kind, 'unknown');
  assert.equal(r.type, 250);
  assert.equal((r as { bytes: Uint8Array }).bytes.length, 16);
});
