/**
 * The feature sections `perfpoke record` writes after the data, as perf
 * record fills them in (tools/perf/util/header.c write_*); PerfDataWriter
 * encodes them and adds EVENT_DESC from the attrs.
 */
import { readFileSync } from 'node:fs';
import { arch, hostname, release, totalmem } from 'node:os';

import type { FeatureData } from '../perfdata/features/index.js';

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
  cmdline: string[];
  nrCpusOnline: number;
  nrCpusAvail: number;
}

/** The host's description (EVENT_DESC and SAMPLE_TIME come from the writer and the recorder). */
export function recordFeatures(i: FeatureInputs): FeatureData[] {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // non-Linux test host: describe the CPU as unknown
  }
  const { desc, cpuid } = cpuIdentity(cpuinfo);
  const archName = arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'aarch64' : arch();
  return [
    { kind: 'hostname', value: hostname() },
    { kind: 'osrelease', value: release() },
    { kind: 'version', value: 'perfpoke 0.1.0' },
    { kind: 'arch', value: archName },
    { kind: 'nrcpus', avail: i.nrCpusAvail, online: i.nrCpusOnline },
    { kind: 'cpudesc', value: desc },
    { kind: 'cpuid', value: cpuid },
    { kind: 'total_mem', kb: BigInt(Math.floor(totalmem() / 1024)) },
    { kind: 'cmdline', argv: i.cmdline },
  ];
}
