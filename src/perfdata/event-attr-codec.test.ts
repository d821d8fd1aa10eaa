import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteReader } from '../io/byte-reader.js';
import { ByteWriter } from '../io/byte-writer.js';
import { attrFlag, emptyAttr, withAttrFlag } from '../abi/event-attr.js';
import { decodeEventAttr, encodeEventAttr } from './event-attr-codec.js';

test('perf_event_attr round-trips in both byte orders, bitfield flags included', () => {
  const a = emptyAttr();
  a.type = 1;
  a.config = 9n;
  a.sampleType = 0x10086n;
  a.flags = withAttrFlag(withAttrFlag(withAttrFlag(0n, 'text_poke'), 'sample_id_all'), 'disabled');
  a.clockid = -1;
  for (const le of [true, false]) {
    const w = new ByteWriter(le);
    encodeEventAttr(w, a);
    const b = decodeEventAttr(new ByteReader(w.finish(), le), a.size);
    assert.deepEqual(b, a);
    assert.equal(attrFlag(b, 'text_poke'), true);
    assert.equal(attrFlag(b, 'cgroup'), false);
  }
});

test('big-endian bitfield: disabled is the top bit of the first byte', () => {
  const a = emptyAttr();
  a.flags = withAttrFlag(0n, 'disabled');
  const w = new ByteWriter(false);
  encodeEventAttr(w, a);
  assert.equal(w.finish()[40], 0x80);
});

test('short attr is truncated with offset', () => {
  assert.throws(
    () => decodeEventAttr(new ByteReader(new Uint8Array(70), true, 0x100), 72),
    /at offset 0x100: perf_event_attr: truncated/,
  );
});
