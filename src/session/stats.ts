/**
 * Record counts as `perf report --stats` gathers them (perf 6.1:
 * session.c events_stats__inc for every record read, per-evsel hists stats for
 * samples and lost samples).
 *
 * perf counts at read time, before ordering, so this walks the file in file
 * order: no queue, no copies. Records inside COMPRESSED records count (perf
 * processes them like any other) and so does each COMPRESSED record itself.
 */
import { RecordType } from '../abi/record-type.js';
import { isFormatError } from '../io/errors.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import type { Session } from './session.js';
import { SampleReadSplitter } from './sample-read.js';
import { fastCount } from './fast-count.js';
import { statsResult, type SessionStats } from './stats-result.js';

export type { EventStats, SessionStats } from './stats-result.js';

/**
 * Count every record of the session's file. Ordinary file-mode files take
 * fast-count.ts's header walk; everything else (and every malformed file) the
 * reader path below. `opts.fast: false` forces the reader path.
 * Throws FormatError for malformed input (the reader's, with file and offset).
 */
export async function collectStats(
  s: Session,
  onProgress?: (fileOffset: number) => void,
  opts: { fast?: boolean } = {},
): Promise<SessionStats> {
  try {
    if (opts.fast ?? true) {
      const fast = await fastCount(s);
      if (fast) return fast;
    }
    return await count(s, onProgress);
  } catch (e) {
    throw s.named(e);
  }
}

async function count(s: Session, onProgress?: (fileOffset: number) => void): Promise<SessionStats> {
  const counts = new Array<number>(128).fill(0);
  const other = new Map<number, number>();
  let total = 0;
  let unknownId = 0;
  const perAttrSamples: number[] = [];
  const perAttrLost: bigint[] = [];
  let n = 0;
  const splitter = new SampleReadSplitter(s);
  let cut: Error | undefined;
  const records = endAtPipeCut(s, (e) => {
    cut = e;
  });
  for await (const batch of records)
    for (const raw of batch) {
      const t = raw.type;
      if (s.needsObserve(raw)) await s.observe(raw);
      total++;
      if (t < 128) counts[t]!++;
      else other.set(t, (other.get(t) ?? 0) + 1);
      if (t === RecordType.SAMPLE) {
        const i = s.attrIndexOf(raw);
        const attr = s.file.attrs[i]?.attr;
        if (i < 0 || !attr) unknownId++;
        else if (SampleReadSplitter.applies(attr)) {
          const rec = raw.decode();
          if (rec.kind === 'sample')
            for (const d of splitter.split(rec, attr))
              perAttrSamples[d.attrIndex] = (perAttrSamples[d.attrIndex] ?? 0) + 1;
        } else perAttrSamples[i] = (perAttrSamples[i] ?? 0) + 1;
      } else if (t === RecordType.TEXT_POKE) {
        raw.decode(); // validate: old_len + new_len must fit the record (FormatError otherwise)
      } else if (t === RecordType.LOST_SAMPLES) {
        const rec = raw.decode();
        const i = s.attrIndexOf(raw);
        if (rec.kind === 'lost_samples' && i >= 0) perAttrLost[i] = (perAttrLost[i] ?? 0n) + rec.lost;
      }
      if (onProgress && (++n & 0xffff) === 0) onProgress(raw.fileOffset);
    }
  // the reader replaces COMPRESSED(2) records by their contents (a chunk may end inside a record,
  // or hold none whole): it counts them for us
  for (const [type, k] of s.file.compressedCounts) {
    counts[type] = (counts[type] ?? 0) + k;
    total += k;
  }
  const st = statsResult(s, {
    total,
    counts,
    other,
    samples: perAttrSamples,
    lost: perAttrLost,
    unknownId: unknownId + splitter.unknownId,
  });
  if (cut) st.cut = cut;
  return st;
}

/** The file's records; a pipe cut inside a record ends them (perf: "unexpected end of event stream"). */
async function* endAtPipeCut(s: Session, onCut: (e: Error) => void): AsyncGenerator<RawRecord[]> {
  try {
    yield* s.file.recordBatches();
  } catch (e) {
    if (!s.file.pipe || !isFormatError(e) || e.kind !== 'truncated') throw e;
    onCut(e);
  }
}
