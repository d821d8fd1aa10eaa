/**
 * A fast path for `stats` on ordinary file-mode files: walk the data section
 * in large reads and count record headers in place, without an object or a
 * promise per record (the reader's `records()` costs both, which made stats
 * several times slower than `perf report --stats` on a 300 MB file).
 *
 * It only counts; anything it does not handle exactly like the reader it hands
 * back (returns undefined) and `collectStats` runs the reader path, which is
 * the reference and the one that raises perf-style FormatErrors:
 * pipe mode, AUXTRACE/TRACING_DATA records (payloads), a header.size below 8,
 * a record past the data section, a short read, a zstd stream the reader
 * would reject. COMPRESSED records are unpacked and walked in place
 * (fast-count-zstd.ts).
 * Records it must look inside (samples of PERF_SAMPLE_READ events,
 * LOST_SAMPLES, TEXT_POKE, EVENT_UPDATE, ID_INDEX) go through RawRecord.decode,
 * like the reader path. Same results: test/stats.test.ts compares both.
 */
import { closeSync, openSync } from 'node:fs';
import { ChunkReader } from './fast-count-chunks.js';
import { RecordType } from '../abi/record-type.js';
import { RawRecord } from '../perfdata/raw-record.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { SampleReadSplitter } from './sample-read.js';
import { InnerRecords, NotFast } from './fast-count-zstd.js';
import type { Session } from './session.js';
import { statsResult, type SessionStats } from './stats-result.js';

export async function fastCount(s: Session): Promise<SessionStats | undefined> {
  const f = s.file;
  if (f.pipe) return undefined;
  const le = f.le;
  const attrs = f.attrs;
  const layouts: AttrLayout[] = attrs.map((_, i) => f.layoutOf(i)!);
  const first = layouts[0];
  const idToIndex = new Map<bigint, number>();
  attrs.forEach((a, i) => {
    for (const id of a.ids) if (!idToIndex.has(id)) idToIndex.set(id, i);
  });
  /** idToIndex for ids < 2^32, keyed by number (no BigInt per sample). */
  const smallIds = new Map<number, number>();
  /** The same for ids < 2^16 (what perf's ids are in practice): an array load per sample. */
  const tinyIds = new Int32Array(1 << 16).fill(-1);
  const addId = (id: bigint, i: number): void => {
    if (idToIndex.has(id)) return;
    idToIndex.set(id, i);
    if (id < 0x100000000n) smallIds.set(Number(id), i);
    if (id < 0x10000n) tinyIds[Number(id)] = i;
  };
  for (const [id, i] of [...idToIndex]) {
    idToIndex.delete(id);
    addId(id, i);
  }
  const readAttrs = attrs.map((a) => SampleReadSplitter.applies(a.attr));
  const anyRead = readAttrs.some(Boolean);
  const splitter = new SampleReadSplitter(s);

  const counts = new Array<number>(256).fill(0);
  const perAttrSamples = new Array<number>(attrs.length).fill(0);
  const perAttrLost = new Array<bigint>(attrs.length).fill(0n);
  let unknownId = 0;
  let total = 0;
  /** EVENT_UPDATE records name events: observed after the walk, in file order (names only matter for the output). */
  const updates: RawRecord[] = [];
  const inner = new InnerRecords(le);

  /** perf's evlist__event2evsel, as the reader's layoutFor. */
  const attrIndex = (dv: DataView, p: number, type: number, size: number): number => {
    if (layouts.length <= 1 || !first) return layouts.length ? 0 : -1;
    if (type !== RecordType.SAMPLE && !first.sampleIdAll) return 0;
    const n = (size - 8) >> 3;
    let off: number;
    if (type === RecordType.SAMPLE) {
      if (first.idPos < 0 || first.idPos >= n) return 0;
      off = p + 8 + first.idPos * 8;
    } else {
      if (first.isPos < 0 || first.isPos > n) return 0;
      off = p + 8 + (n - first.isPos) * 8;
    }
    // ids are small in practice: look up by number and leave BigInt for the rare high ones
    const hi = dv.getUint32(le ? off + 4 : off, le);
    if (hi === 0) {
      const lo = dv.getUint32(le ? off : off + 4, le);
      if (lo === 0) return 0;
      if (lo < 0x10000) {
        const t = tinyIds[lo]!;
        if (t >= 0) return t;
      }
      const i = smallIds.get(lo);
      if (i !== undefined) return i;
    }
    const id = dv.getBigUint64(off, le);
    return idToIndex.get(id) ?? 0;
  };

  /** Count one record at b[p, p + size); `at`: its file offset (inside COMPRESSED: the COMPRESSED record's). */
  const countOne = (b: Uint8Array, bdv: DataView, p: number, type: number, size: number, at: number): void => {
    total++;
    if (type < 256) counts[type]!++;
    else throw new NotFast();
    if (type === RecordType.SAMPLE) {
      const i = attrIndex(bdv, p, type, size);
      if (i < 0) unknownId++;
      else if (anyRead && readAttrs[i]) {
        const rec = new RawRecord(b.subarray(p, p + size), at, le, layouts[i], f.textPokeAbi).decode();
        if (rec.kind === 'sample') for (const d of splitter.split(rec, attrs[i]!.attr)) perAttrSamples[d.attrIndex]!++;
      } else perAttrSamples[i]!++;
    } else if (
      type === RecordType.COMPRESSED ||
      type === RecordType.COMPRESSED2 ||
      type === RecordType.AUXTRACE ||
      type === RecordType.HEADER_TRACING_DATA
    ) {
      throw new NotFast();
    } else if (
      type === RecordType.LOST_SAMPLES ||
      type === RecordType.TEXT_POKE ||
      type === RecordType.EVENT_UPDATE ||
      type === RecordType.ID_INDEX
    ) {
      const i = type < RecordType.HEADER_ATTR ? attrIndex(bdv, p, type, size) : 0;
      const raw = new RawRecord(b.subarray(p, p + size), at, le, layouts[i], f.textPokeAbi);
      const rec = raw.decode();
      if (rec.kind === 'lost_samples' && i >= 0 && i < attrs.length) perAttrLost[i] = perAttrLost[i]! + rec.lost;
      else if (rec.kind === 'id_index') {
        for (const e of rec.entries) {
          const idx = Number(e.idx);
          if (idx < attrs.length) addId(e.id, idx);
        }
      } else if (rec.kind === 'event_update') updates.push(raw.copy());
    }
  };

  const start = f.header.data.offset;
  const end = start + f.header.data.size;
  const fd = openSync(f.path, 'r');
  const chunks = new ChunkReader(fd, start, end);
  let buf: Uint8Array = new Uint8Array(0);
  let dv = new DataView(buf.buffer);
  let words = new Int32Array(buf.buffer, 0, 0);
  // host-order 32-bit view: when the file is little-endian (as the host) and
  // records sit on 4-byte boundaries, a header is two array loads, not DataView calls
  const direct = le && new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  /**
   * Walk the whole records of buf[p, have) (buf[0] at file offset fileOff) and
   * return where the walk stopped: at the first record not whole in the
   * chunk, or at the data section's end. A synchronous function of its own
   * because V8 does not optimise a loop inside an async function that runs
   * once (no on-stack replacement into a resumed async function): inline in
   * fastCount, this loop ran unoptimised at ~70 ns a record.
   */
  const walk = (buf: Uint8Array, dv: DataView, words: Int32Array, fileOff: number, p: number, have: number): number => {
    const stop = Math.min(have, end - fileOff);
    while (stop - p >= 8) {
      let type: number;
      let size: number;
      if (direct && (p & 3) === 0) {
        type = words[p >> 2]! >>> 0;
        size = words[(p >> 2) + 1]! >>> 16;
      } else {
        type = dv.getUint32(p, le);
        size = dv.getUint16(p + 6, le);
      }
      if (size > have - p) return p; // continues in the next chunk
      if (size < 8 || fileOff + p + size > end) throw new NotFast();
      if (type === RecordType.COMPRESSED || type === RecordType.COMPRESSED2) {
        // perf counts the COMPRESSED record itself, then each record inside it
        total++;
        counts[type]!++;
        const at = fileOff + p;
        inner.push(buf, p, type, size, (b, bdv, q, t, n) => countOne(b, bdv, q, t, n, at));
      } else countOne(buf, dv, p, type, size, fileOff + p);
      p += size;
    }
    return p;
  };

  try {
    let fileOff = start; // file offset of buf[0]
    let have = 0; // valid bytes in buf
    let p = 0; // cursor in buf
    for (;;) {
      p = walk(buf, dv, words, fileOff, p, have);
      if (end - (fileOff + p) <= 0) break;
      // the next chunk, after the partial record kept from this one
      const next = await chunks.next(buf, p, have);
      if (!next) throw new NotFast(); // a record past the data section's end
      if (next.buf !== buf) {
        buf = next.buf;
        dv = new DataView(buf.buffer, buf.byteOffset, buf.length);
        words = new Int32Array(buf.buffer, buf.byteOffset, buf.length >> 2);
      }
      fileOff = next.fileOff;
      p = next.p;
      have = next.have;
      if (have - p < 8) throw new NotFast();
    }
    inner.finish();
    for (const u of updates) await s.observe(u);
  } catch (e) {
    if (e instanceof NotFast) return undefined;
    throw e;
  } finally {
    await chunks.settle();
    closeSync(fd);
  }
  return statsResult(s, {
    total,
    counts,
    samples: perAttrSamples,
    lost: perAttrLost,
    unknownId: unknownId + splitter.unknownId,
  });
}
