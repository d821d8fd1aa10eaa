/**
 * The feature sections `perfpoke record` writes after the data, in perf's
 * encodings (tools/perf/util/header.c write_* / process_*): strings are
 * `u32 len` (padded to 64 with NULs, NUL included) + bytes.
 */
import { readFileSync } from 'node:fs';
import { arch, hostname, release, totalmem } from 'node:os';

import { encodeEventAttr } from '../perfdata/event-attr-codec.js';
import { Feature } from '../abi/feature.js';
import { ByteWriter } from '../io/byte-writer.js';
import type { RecordEvent } from './events.js';

/** header.c NAME_ALIGN */
const NAME_ALIGN = 64;

export interface FeatureSection {
  id: number;
  bytes: Uint8Array;
}

export function writePerfString(w: ByteWriter, s: string): void {
  const b = Buffer.from(s, 'utf8');
  const len = Math.ceil((b.length + 1) / NAME_ALIGN) * NAME_ALIGN;
  w.u32(len)
    .bytes(b)
    .zeros(len - b.length);
}

function section(id: number, le: boolean, fill: (w: ByteWriter) => void): FeatureSection {
  const w = new ByteWriter(le);
  fill(w);
  return { id, bytes: w.finish().slice() };
}

/** What /proc/cpuinfo says, as perf's CPUDESC ("model name") and x86 CPUID ("vendor,family,model,stepping"). */
export function cpuIdentity(cpuinfo: string): { desc: string; cpuid: string } {
  const field = (k: string): string | undefined => new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm').exec(cpuinfo)?.[1]?.trim();
  const desc = (field('model name') ?? field('Processor') ?? field('cpu') ?? 'unknown').replace(/\s+/g, ' ');
  const vendor = field('vendor_id');
  const cpuid = vendor
    ? `${vendor},${field('cpu family') ?? 0},${field('model') ?? 0},${field('stepping') ?? 0}`
    : desc;
  return { desc, cpuid };
}

export interface FeatureInputs {
  le: boolean;
  events: { event: RecordEvent; ids: bigint[] }[];
  cmdline: string[];
  nrCpusOnline: number;
  nrCpusAvail: number;
  /** First and last sample time, when known (HEADER_SAMPLE_TIME). */
  sampleTime?: { first: bigint; last: bigint };
}

/** Build the sections in ascending feature order (the order perf expects them in the file). */
export function buildFeatures(i: FeatureInputs): FeatureSection[] {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // non-Linux test host: describe the CPU as unknown
  }
  const { desc, cpuid } = cpuIdentity(cpuinfo);
  const archName = arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'aarch64' : arch();
  const out: FeatureSection[] = [
    section(Feature.HOSTNAME, i.le, (w) => writePerfString(w, hostname())),
    section(Feature.OSRELEASE, i.le, (w) => writePerfString(w, release())),
    section(Feature.VERSION, i.le, (w) => writePerfString(w, 'perfpoke 0.1.0')),
    section(Feature.ARCH, i.le, (w) => writePerfString(w, archName)),
    section(Feature.NRCPUS, i.le, (w) => w.u32(i.nrCpusAvail).u32(i.nrCpusOnline)),
    section(Feature.CPUDESC, i.le, (w) => writePerfString(w, desc)),
    section(Feature.CPUID, i.le, (w) => writePerfString(w, cpuid)),
    section(Feature.TOTAL_MEM, i.le, (w) => w.u64(BigInt(Math.floor(totalmem() / 1024)))),
    section(Feature.CMDLINE, i.le, (w) => {
      w.u32(i.cmdline.length);
      for (const a of i.cmdline) writePerfString(w, a);
    }),
    section(Feature.EVENT_DESC, i.le, (w) => {
      const attrSize = i.events[0]?.event.attr.size ?? 0;
      w.u32(i.events.length).u32(attrSize);
      for (const { event, ids } of i.events) {
        encodeEventAttr(w, event.attr, attrSize);
        w.u32(ids.length);
        writePerfString(w, event.name);
        for (const id of ids) w.u64(id);
      }
    }),
  ];
  if (i.sampleTime) {
    const t = i.sampleTime;
    out.push(section(Feature.SAMPLE_TIME, i.le, (w) => w.u64(t.first).u64(t.last)));
  }
  return out.sort((a, b) => a.id - b.id);
}
