import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyAttr, withAttrFlag } from '../../abi/event-attr.js';
import { SampleType } from '../../abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_KERNEL } from '../../abi/record-type.js';
import { attrLayout } from '../layout.js';
import { decodeRecord, encodeRecordBytes, trailerEndOf, type PerfRecord } from './index.js';
import { RawRecord } from '../raw-record.js';

// Linux 6.1 grows header.size of TEXT_POKE/KSYMBOL by every other consumer's
// sample_id size; the real sample_id sits right after the body, zeros follow.
function inflate(bytes: Uint8Array, by: number, le: boolean): Uint8Array {
  const out = new Uint8Array(bytes.length + by);
  out.set(bytes);
  new DataView(out.buffer).setUint16(6, out.length, le);
  return out;
}

for (const le of [true, false]) {
  const attr = emptyAttr();
  attr.sampleType = SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.IDENTIFIER;
  attr.flags = withAttrFlag(0n, 'sample_id_all');
  const layout = attrLayout(attr, le);
  const sampleId = { pid: -1, tid: 0, time: 123456789n, cpu: 1, cpuRes: 0, identifier: 42n };
  const recs: PerfRecord[] = [
    {
      kind: 'text_poke',
      type: RecordType.TEXT_POKE,
      misc: PERF_RECORD_MISC_KERNEL,
      size: 0,
      fileOffset: 0,
      addr: 0xffffffff81000000n,
      oldLen: 5,
      newLen: 5,
      oldBytes: Uint8Array.of(0x0f, 0x1f, 0x44, 0, 0),
      newBytes: Uint8Array.of(0xe9, 1, 2, 3, 4),
      sampleId,
    },
    {
      kind: 'ksymbol',
      type: RecordType.KSYMBOL,
      misc: 0,
      size: 0,
      fileOffset: 0,
      addr: 0xffffffffc0000000n,
      len: 4096,
      ksymType: 2,
      flags: 0,
      name: 'ftrace_trampoline',
      sampleId,
    } as PerfRecord,
  ];
  for (const rec of recs) {
    test(`${rec.kind} inflated by 32 bytes (${le ? 'LE' : 'BE'}): sample_id read after the body`, () => {
      const exact = encodeRecordBytes(rec, le, { layout });
      const fat = inflate(exact, 32, le);
      const a = decodeRecord(exact, 0, { le, layout, textPokeAbi: 'final' }) as {
        sampleId?: unknown;
        inflatedBy?: number;
      };
      const b = decodeRecord(fat, 0, { le, layout, textPokeAbi: 'final' }) as {
        sampleId?: unknown;
        inflatedBy?: number;
      };
      assert.deepEqual(b.sampleId, sampleId);
      assert.equal(b.inflatedBy, 32);
      assert.equal(a.inflatedBy, undefined);
      assert.equal(trailerEndOf(rec.type, fat, le, layout.trailerSize), exact.length);
      assert.equal(new RawRecord(fat, 0, le, layout, 'final', 0).timestamp(), 123456789n);
    });
  }
  test(`non-zero bytes after the body keep the declared size as the truth (${le ? 'LE' : 'BE'})`, () => {
    const exact = encodeRecordBytes(recs[0]!, le, { layout });
    const fat = inflate(exact, 32, le);
    fat[fat.length - 1] = 7; // a genuine (newer) trailing field: sample_id stays at the end
    assert.equal(trailerEndOf(RecordType.TEXT_POKE, fat, le, layout.trailerSize), fat.length);
  });
}
