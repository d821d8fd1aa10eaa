/**
 * Recordings for `check`'s verdicts, made from a real or synthetic `perf
 * record --kcore` directory with the project's own reader and writer
 * (PerfFile → PerfDataWriter): the same records with one change each — the
 * text_poke attr bit cleared, a PERF_RECORD_LOST after a poke, a poke left
 * out, or every poke delivered twice through a second text_poke event (what
 * Linux 6.1 does). kcore_dir is copied unless asked not to.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { attrFlag, withAttrFlag } from '../src/abi/event-attr.js';
import { RecordType } from '../src/abi/record-type.js';
import { SampleType } from '../src/abi/sample-format.js';
import { eventDescNames } from '../src/machine/evidence.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { PerfDataWriter, type WriterAttr } from '../src/perfdata/writer.js';

/** PERF_RECORD_LOST, LOST_SAMPLES, or an AUX record with PERF_AUX_FLAG_TRUNCATED (1) / COLLISION (8). */
export type LossRecordKind = 'lost' | 'lost_samples' | 'aux_truncated' | 'aux_collision';

function lossRecord(kind: LossRecordKind, id: bigint, count: bigint, sampleId: object): PerfRecord {
  const head = { misc: 0, size: 0, fileOffset: 0, sampleId };
  const r =
    kind === 'lost'
      ? { ...head, kind, type: RecordType.LOST, id, lost: count }
      : kind === 'lost_samples'
        ? { ...head, kind, type: RecordType.LOST_SAMPLES, lost: count }
        : {
            ...head,
            kind: 'aux',
            type: RecordType.AUX,
            auxOffset: 0n,
            auxSize: count,
            flags: kind === 'aux_truncated' ? 1n : 8n,
          };
  return r as unknown as PerfRecord;
}

export interface Rewrite {
  /** Clear attr.text_poke on every event. */
  noTextPokeAttr?: boolean;
  /**
   * Insert PERF_RECORD_LOST (count `lost`) right after the n-th TEXT_POKE (0-based, file order), on the
   * event that poke came from, or (`otherEvent`) on an event without text_poke.
   */
  lostAfterPoke?: { n: number; lost: bigint; otherEvent?: boolean; kind?: LossRecordKind };
  /** Leave out the n-th TEXT_POKE (file order). */
  dropPoke?: number;
  /** A second text_poke event; every poke is written again through it, `delayNs` later. */
  secondEvent?: { delayNs: bigint };
  /** Do not copy kcore_dir (a bare `data` file is written as DIR/data). */
  noKcore?: boolean;
}

type WithSid = PerfRecord & { sampleId?: { time?: bigint; cpu?: number; identifier?: bigint } };

/** Write DIR/data (+ DIR/kcore_dir) from SRC (a --kcore directory) with the change asked for. */
export async function rewriteRecording(src: string, dir: string, o: Rewrite): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const f = await PerfFile.open(join(src, 'data'));
  const two = o.secondEvent !== undefined;
  if (two && f.attrs.length !== 1) throw new Error('secondEvent: the source must have one event');
  const names = await eventDescNames(f);
  const attrs: WriterAttr[] = f.attrs.map((a, i) => {
    let flags = a.attr.flags;
    if (o.noTextPokeAttr) flags = withAttrFlag(flags, 'text_poke', false);
    // two events must be told apart: IDENTIFIER in every sample_id, one id per event
    const sampleType = two ? a.attr.sampleType | SampleType.IDENTIFIER : a.attr.sampleType;
    return { attr: { ...a.attr, flags, sampleType }, ids: two ? [BigInt(100 + i)] : a.ids, name: names[i] };
  });
  if (two) {
    const base = attrs[0]!.attr;
    attrs.push({ attr: { ...base }, ids: [200n] });
  }
  const w = await PerfDataWriter.create(join(dir, 'data'), attrs);
  const second: WithSid[] = [];
  let n = 0;
  try {
    for await (const raw of f.records()) {
      if (raw.type >= 64) continue; // the writer makes its own header records and features
      const rec = raw.decode() as WithSid;
      if ('inflatedBy' in rec) rec.inflatedBy = undefined; // re-encoded at its true size
      const isPoke = raw.type === RecordType.TEXT_POKE;
      const k = isPoke ? n++ : -1;
      if (isPoke && k === o.dropPoke) continue;
      if (two && rec.sampleId) rec.sampleId = { ...rec.sampleId, identifier: 100n };
      // the second event's copies go out right after the first's, before any later record
      await w.write(rec, two ? 0 : undefined);
      if (isPoke && two) {
        const c = {
          ...rec,
          sampleId: { ...rec.sampleId, time: (rec.sampleId?.time ?? 0n) + o.secondEvent!.delayNs, identifier: 200n },
        };
        second.push(c as WithSid);
        await w.write(c as PerfRecord, attrs.length - 1);
      }
      if (isPoke && o.lostAfterPoke?.n === k) {
        const own = f.attrs.findIndex((_, i) => f.layoutOf(i) === raw.layout);
        const ev = o.lostAfterPoke.otherEvent ? f.attrs.findIndex((a) => !attrFlag(a.attr, 'text_poke')) : own;
        if (ev < 0) throw new Error('lostAfterPoke: no such event in the source');
        const id = attrs[ev]!.ids[0] ?? 0n;
        const sid = { ...rec.sampleId, time: (rec.sampleId?.time ?? 0n) + 1n, identifier: attrs[ev]!.ids[0] };
        await w.write(lossRecord(o.lostAfterPoke.kind ?? 'lost', id, o.lostAfterPoke.lost, sid), ev);
      }
    }
    await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  } finally {
    await f.close();
  }
  if (!o.noKcore) cpSync(join(src, 'kcore_dir'), join(dir, 'kcore_dir'), { recursive: true });
}

/** A copy of a file-mode perf.data cut inside its data section (at `fraction` of it; header left as it was). */
export function cutDataSection(srcData: string, dst: string, fraction: number): void {
  const b = readFileSync(srcData);
  const dataOffset = Number(b.readBigUInt64LE(40));
  const dataSize = Number(b.readBigUInt64LE(48));
  writeFileSync(dst, b.subarray(0, dataOffset + Math.floor(dataSize * fraction)));
}

/** A copy whose header says the data section ends where it really ends, but the last record is cut. */
export function cutLastRecord(srcData: string, dst: string, cutBytes: number): void {
  const b = Buffer.from(readFileSync(srcData));
  const dataOffset = Number(b.readBigUInt64LE(40));
  const dataSize = Number(b.readBigUInt64LE(48));
  const out = Buffer.from(b.subarray(0, dataOffset + dataSize - cutBytes));
  out.writeBigUInt64LE(BigInt(dataSize - cutBytes), 48);
  // drop the feature bits: their sections followed the cut data
  out.fill(0, 72, 104);
  writeFileSync(dst, out);
}

/** What a killed `perf record` leaves: the header's data.size still 0 and no feature bits, the records after it. */
export function unfinishedFile(srcData: string, dst: string): void {
  const b = Buffer.from(readFileSync(srcData));
  const dataOffset = Number(b.readBigUInt64LE(40));
  const dataSize = Number(b.readBigUInt64LE(48));
  const out = Buffer.from(b.subarray(0, dataOffset + dataSize));
  out.writeBigUInt64LE(0n, 48);
  out.fill(0, 72, 104);
  writeFileSync(dst, out);
}
