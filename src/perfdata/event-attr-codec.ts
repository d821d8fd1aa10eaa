import { ByteReader } from '../io/byte-reader.js';
import { ByteWriter } from '../io/byte-writer.js';
import { FormatError } from '../io/errors.js';
import { emptyAttr, PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER8, type EventAttr } from '../abi/event-attr.js';

/**
 * perf_event_attr to and from bytes (the layout and flags live in
 * src/abi/event-attr.ts; this is the perfdata layer's codec for them).
 */

/** Reverse the bits of each byte: how a big-endian compiler lays out a bitfield (perf's swap_bitfield). */
function revBitsPerByte(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) {
    let x = b[i]!;
    let r = 0;
    for (let k = 0; k < 8; k++) {
      r = (r << 1) | (x & 1);
      x >>= 1;
    }
    out[i] = r;
  }
  return out;
}

/**
 * Decode `attrSize` bytes at the reader's cursor as perf_event_attr. The
 * attr's own `size` field may be smaller (older perf) or larger (newer); we
 * read what is there and zero the rest.
 * Throws FormatError 'truncated' / 'bad-size'.
 */
export function decodeEventAttr(r: ByteReader, attrSize: number): EventAttr {
  const start = r.pos;
  if (attrSize < PERF_ATTR_SIZE_VER0) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + start,
      structure: 'perf_event_attr',
      actual: attrSize,
      expected: `≥ ${PERF_ATTR_SIZE_VER0}`,
    });
  }
  r.need(attrSize, 'perf_event_attr');
  const full = new Uint8Array(Math.max(attrSize, PERF_ATTR_SIZE_VER8));
  full.set(r.bytes.subarray(start, start + attrSize));
  const b = new ByteReader(full, r.le, r.base + start, 'perf_event_attr');
  const a = emptyAttr();
  a.type = b.u32();
  a.size = b.u32();
  a.config = b.u64();
  a.samplePeriod = b.u64();
  a.sampleType = b.u64();
  a.readFormat = b.u64();
  const fb = b.borrow(8);
  a.flags = r.le
    ? new DataView(fb.buffer, fb.byteOffset, 8).getBigUint64(0, true)
    : new DataView(revBitsPerByte(fb).buffer).getBigUint64(0, true);
  a.wakeupEvents = b.u32();
  a.bpType = b.u32();
  a.config1 = b.u64();
  a.config2 = b.u64();
  a.branchSampleType = b.u64();
  a.sampleRegsUser = b.u64();
  a.sampleStackUser = b.u32();
  a.clockid = b.i32();
  a.sampleRegsIntr = b.u64();
  a.auxWatermark = b.u32();
  a.sampleMaxStack = b.u16();
  b.u16();
  a.auxSampleSize = b.u32();
  a.auxAction = b.u32();
  a.sigData = b.u64();
  a.config3 = b.u64();
  r.pos = start + attrSize;
  return a;
}

/** Encode as `size` bytes (default attr.size), in the writer's byte order. */
export function encodeEventAttr(w: ByteWriter, a: EventAttr, size = a.size): void {
  const t = new ByteWriter(w.le, PERF_ATTR_SIZE_VER8);
  t.u32(a.type).u32(size).u64(a.config).u64(a.samplePeriod).u64(a.sampleType).u64(a.readFormat);
  const fw = new Uint8Array(8);
  new DataView(fw.buffer).setBigUint64(0, a.flags, true);
  t.bytes(w.le ? fw : revBitsPerByte(fw));
  t.u32(a.wakeupEvents).u32(a.bpType).u64(a.config1).u64(a.config2).u64(a.branchSampleType).u64(a.sampleRegsUser);
  t.u32(a.sampleStackUser).i32(a.clockid).u64(a.sampleRegsIntr).u32(a.auxWatermark).u16(a.sampleMaxStack).u16(0);
  t.u32(a.auxSampleSize).u32(a.auxAction).u64(a.sigData).u64(a.config3);
  const all = t.finish();
  if (size <= all.length) w.bytes(all.subarray(0, size));
  else w.bytes(all).zeros(size - all.length);
}
