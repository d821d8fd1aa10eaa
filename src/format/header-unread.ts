/**
 * What `perf report --header-only` (perf 6.1) prints for a feature section it
 * could not read: perf stops reading sections at the first damaged one (a bad
 * BUILD_ID only warns), then prints every section of the table from its
 * `perf_env`, where the unread ones are still empty: "(null)" strings, zero
 * counts. Two of them perf fills from the host meanwhile (perf_env__cpuid,
 * the sysfs PMU list), which `HostEnv` carries.
 */
import { opendirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Feature, featureName } from '../abi/feature.js';
import { cpuIdentity } from '../record/features.js';

export interface HostEnv {
  /** perf_env__cpuid: this machine's cpuid string (x86: "vendor,family,model,stepping"). */
  cpuid?: string;
  /** This machine's PMUs in sysfs directory order, "name = type". */
  pmus?: string[];
}

const FULL_ONLY = new Set<number>([
  Feature.CPU_TOPOLOGY,
  Feature.NUMA_TOPOLOGY,
  Feature.CACHE,
  Feature.MEM_TOPOLOGY,
  Feature.HYBRID_TOPOLOGY,
]);

/** The lines perf prints for feature `id` when its section was not read. */
export function unreadFeatureLines(id: number, full: boolean, host: HostEnv): string[] {
  if (FULL_ONLY.has(id) && !full) return [`# ${featureName(id)} info available, use -I to display`];
  const nullString: Partial<Record<number, string>> = {
    [Feature.HOSTNAME]: 'hostname',
    [Feature.OSRELEASE]: 'os release',
    [Feature.VERSION]: 'perf version',
    [Feature.ARCH]: 'arch',
    [Feature.CPUDESC]: 'cpudesc',
  };
  const key = nullString[id];
  if (key) return [`# ${key} : (null)`];
  switch (id) {
    case Feature.CPUID:
      return [`# cpuid : ${host.cpuid ?? '(null)'}`];
    case Feature.NRCPUS:
      return ['# nrcpus online : 0', '# nrcpus avail : 0'];
    case Feature.TOTAL_MEM:
      return ['# total memory : 0 kB'];
    case Feature.CMDLINE:
      return ['# cmdline : '];
    case Feature.EVENT_DESC:
      return ['# event desc: not available or unable to read'];
    case Feature.CPU_TOPOLOGY:
      return ['# Core ID and Socket ID information is not available'];
    case Feature.PMU_MAPPINGS:
      return [host.pmus?.length ? `# pmu mappings: ${host.pmus.join(', ')}` : '# pmu mappings: not available'];
    case Feature.CACHE:
      return ['# CPU cache info:'];
    case Feature.SAMPLE_TIME:
      return [
        '# time of first sample : 0.000000',
        '# time of last sample : 0.000000',
        '# sample duration :      0.000 ms',
      ];
    case Feature.MEM_TOPOLOGY:
      return ['# memory nodes (nr 0, block size 0x0):'];
    case Feature.CLOCKID:
      return ['# clockid frequency: 0 MHz'];
    case Feature.DIR_FORMAT:
      return ['# directory data version : 0'];
    case Feature.COMPRESSED:
      return ['# compressed : Unknown, level = 0, ratio = 0'];
    case Feature.CPU_PMU_CAPS:
      return ['# cpu pmu capabilities: not available'];
    case Feature.CLOCK_DATA:
      return ['# reference time disabled'];
    case Feature.HYBRID_TOPOLOGY:
      return ['# hybrid cpu system:'];
    case Feature.BRANCH_STACK:
      return ['# contains samples with branch stack'];
    case Feature.AUXTRACE:
      return ['# contains AUX area data (e.g. instruction trace)'];
    case Feature.STAT:
      return ['# contains stat data'];
    default:
      // TRACING_DATA, BUILD_ID, GROUP_DESC, BPF_*, PMU_CAPS: nothing without data
      return [];
  }
}

/** The host values perf 6.1 prints for unread CPUID / PMU_MAPPINGS sections (x86 cpuid form). */
export function readHostEnv(): HostEnv {
  const host: HostEnv = {};
  try {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    if (/^vendor_id/m.test(cpuinfo)) host.cpuid = cpuIdentity(cpuinfo).cpuid;
  } catch {
    // no /proc: perf would print (null) too
  }
  try {
    const dir = '/sys/bus/event_source/devices';
    // readdir order, as perf's PMU scan (readdirSync would sort the names)
    const d = opendirSync(dir);
    const pmus: string[] = [];
    try {
      for (let e = d.readSync(); e; e = d.readSync()) {
        try {
          pmus.push(`${e.name} = ${readFileSync(join(dir, e.name, 'type'), 'utf8').trim()}`);
        } catch {
          // a PMU without a type file is not listed
        }
      }
    } finally {
      d.closeSync();
    }
    host.pmus = pmus;
  } catch {
    // no sysfs
  }
  return host;
}
