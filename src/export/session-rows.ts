/**
 * The `records`, `samples` and `recordings` tables from the session layer:
 * records in file order as `perf report --stats` counts them (a COMPRESSED
 * record counts once, beside the records inside it), samples in perf's
 * delivery order with the fields `perfpoke script --json` prints, and the
 * recording's header features.
 */
import { readFileFeature } from '../perfdata/file-feature.js';
import { Feature } from '../abi/feature.js';
import {
  PERF_RECORD_MISC_CPUMODE_MASK,
  PERF_RECORD_MISC_GUEST_KERNEL,
  PERF_RECORD_MISC_KERNEL,
  RecordType,
} from '../abi/record-type.js';
import { PERF_CONTEXT_MAX } from '../abi/sample-format.js';
import type { Machine } from '../machine/from-perf-data.js';
import type { FeatureData } from '../perfdata/features/index.js';
import type { PerfRecord } from '../perfdata/index.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import { perfEventName } from '../format/perf-event-text.js';
import { SampleReadSplitter } from '../session/sample-read.js';
import { openSession, type Session } from '../session/session.js';
import { ThreadComms } from '../session/threads.js';
import { jsonBytes } from '../format/json-lines.js';
import type { Row } from './schema.js';
import { UserDsos } from './user-dsos.js';

type Sample = Extract<PerfRecord, { kind: 'sample' }>;

function recordCpu(raw: RawRecord): number | null {
  if (!raw.layout || raw.type >= RecordType.HEADER_ATTR) return null;
  const r = raw.decode() as { cpu?: number; sampleId?: { cpu?: number } };
  return (raw.type === RecordType.SAMPLE ? r.cpu : r.sampleId?.cpu) ?? null;
}

/** One row per record, file order; `times` collects the first and last record time. */
export async function recordRows(dataFile: string): Promise<{ rows: Row[]; first?: bigint; last?: bigint }> {
  // the COMPRESSED records themselves too: a container whose contents only finish a record begun in the
  // previous one still counts, as perf report --stats counts it
  const s = await openSession(dataFile, { ordered: false, withCompressed: true });
  const rows: Row[] = [];
  let first: bigint | undefined;
  let last: bigint | undefined;
  try {
    for await (const raw of s.events()) {
      const t = raw.timestamp();
      const time = t === undefined || t === 0n || t === BigInt.asUintN(64, -1n) ? null : t;
      if (time !== null) {
        if (first === undefined || time < first) first = time;
        if (last === undefined || time > last) last = time;
      }
      rows.push(recordRow(raw.fileOffset, raw.type, raw.misc, raw.size, time, recordCpu(raw)));
    }
  } catch (e) {
    throw s.named(e);
  } finally {
    await s.close();
  }
  return { rows, first, last };
}

function recordRow(offset: number, type: number, misc: number, size: number, time: bigint | null, cpu: number | null) {
  return { offset, record_type: type, type_name: perfEventName(type), misc, size, time_ns: time, cpu };
}

/** Callchain addresses without the PERF_CONTEXT_* markers. */
function chainAddresses(chain: bigint[] | undefined): bigint[] | null {
  return chain ? chain.filter((ip) => ip < PERF_CONTEXT_MAX) : null;
}

function isKernel(misc: number): boolean {
  const m = misc & PERF_RECORD_MISC_CPUMODE_MASK;
  return m === PERF_RECORD_MISC_KERNEL || m === PERF_RECORD_MISC_GUEST_KERNEL;
}

/** One row per sample as perf script delivers them (PERF_SAMPLE_READ groups give one per member). */
export async function sampleRows(dataFile: string, m: Machine): Promise<Row[]> {
  const s = await openSession(dataFile);
  const rows: Row[] = [];
  const threads = new ThreadComms();
  const dsos = new UserDsos();
  const splitter = new SampleReadSplitter(s);
  const row = (raw: RawRecord, rec: Sample, attrIndex: number, period: bigint | undefined): Row => {
    const pid = rec.pid ?? -1;
    const tid = rec.tid ?? -1;
    const ip = rec.ip ?? null;
    const kernel = isKernel(raw.misc);
    const at = { time: rec.time ?? 0n, fileOffset: raw.fileOffset };
    const ksym = kernel && ip !== null ? m.symbolizer.ksymbolAt(ip, at) : undefined;
    return {
      offset: raw.fileOffset,
      time_ns: rec.time ?? null,
      cpu: rec.cpu ?? null,
      pid: rec.pid ?? null,
      tid: rec.tid ?? null,
      comm: threads.comm(pid, tid),
      ip,
      sym: kernel && ip !== null ? m.symbolizer.symOff(ip, at) || null : null,
      dso: kernel ? (ksym?.replace(/\+0x[0-9a-f]+$/, '') ?? '[kernel.kallsyms]') : (dsos.find(pid, ip ?? 0n) ?? null),
      period: period ?? rec.period ?? s.file.attrs[attrIndex]?.attr.samplePeriod ?? 0n,
      event: attrIndex >= 0 ? s.eventNameAt(attrIndex) : '[unknown]',
      callchain: chainAddresses(rec.callchain),
    };
  };
  try {
    for await (const raw of s.events()) {
      if (raw.type === RecordType.SAMPLE) {
        const rec = raw.decode() as Sample;
        const a = s.attrOf(raw);
        if (a && SampleReadSplitter.applies(a.attr))
          for (const d of splitter.split(rec, a.attr)) rows.push(row(raw, rec, d.attrIndex, d.period));
        else rows.push(row(raw, rec, s.attrIndexOf(raw), undefined));
      } else if (raw.type === RecordType.COMM) {
        const r = raw.decode() as Extract<PerfRecord, { kind: 'comm' }>;
        threads.onComm(r.pid, r.tid, r.comm);
      } else if (raw.type === RecordType.FORK) {
        const r = raw.decode() as Extract<PerfRecord, { kind: 'fork' }>;
        threads.onFork(r.pid, r.tid, r.ppid, r.ptid);
        dsos.onFork(r.pid, r.ppid);
      } else if ((raw.type === RecordType.MMAP || raw.type === RecordType.MMAP2) && !isKernel(raw.misc)) {
        const r = raw.decode() as Extract<PerfRecord, { kind: 'mmap' | 'mmap2' }>;
        dsos.onMmap(r.pid, r.addr, r.len, r.filename);
      }
    }
  } catch (e) {
    throw s.named(e);
  } finally {
    await s.close();
  }
  return rows;
}

function feature(s: Session, id: number): Promise<FeatureData | undefined> {
  return readFileFeature(s.file, id);
}

/** Build id bytes: the used length is in byte 20 when misc has PERF_RECORD_MISC_BUILD_ID_SIZE. */
function buildIdHex(e: { misc: number; buildId: Uint8Array }): string {
  const n = e.misc & (1 << 15) ? (e.buildId[20] ?? 20) : 20;
  return jsonBytes(e.buildId.subarray(0, Math.min(n, 20)));
}

/** The header half of the recordings row (the counts are added by the caller). */
export async function headerRow(dataFile: string): Promise<Row> {
  const s = await openSession(dataFile);
  try {
    if (s.file.pipe) for await (const _ of s.file.records()); // pipe mode: features arrive as records
    const str = async (id: number): Promise<string | null> => {
      const f = await feature(s, id);
      return f && 'value' in f && typeof f.value === 'string' ? f.value : null;
    };
    const nr = await feature(s, Feature.NRCPUS);
    const cmd = await feature(s, Feature.CMDLINE);
    const bid = await feature(s, Feature.BUILD_ID);
    const kernelBid =
      bid?.kind === 'build_id' ? bid.entries.find((e) => e.filename === '[kernel.kallsyms]') : undefined;
    return {
      path: dataFile,
      host: await str(Feature.HOSTNAME),
      kernel: await str(Feature.OSRELEASE),
      perf_version: await str(Feature.VERSION),
      arch: await str(Feature.ARCH),
      nr_cpus: nr?.kind === 'nrcpus' ? nr.online : null,
      cmdline: cmd?.kind === 'cmdline' ? cmd.argv.join(' ') : null,
      events: s.eventNames(),
      kernel_build_id: kernelBid ? buildIdHex(kernelBid) : null,
    };
  } catch (e) {
    throw s.named(e);
  } finally {
    await s.close();
  }
}
