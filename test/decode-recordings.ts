/**
 * The simulated intel_pt recordings the decode-vs-perf tests share (perfpoke
 * sim with a `perf record -a`-like side band): each test file makes the ones
 * it names in its own temp folder.
 */
import { join } from 'node:path';
import { type SimOptions, simulate } from '../src/sim/simulate.js';
import { tempDir } from './temp-dir.js';

const COMMON = { cpus: 2, flips: 4, size: 4000, truth: false } as const;

export const RECORDINGS = {
  /** text pokes, three tasks switching */
  pokes: { ...COMMON, seed: 2, tasks: 3, switches: 10 },
  /** no TEXT_POKE records (errors), PSB+ inside bursts, four tasks on three CPUs */
  noPokes: {
    ...COMMON,
    seed: 3,
    cpus: 3,
    size: 9000,
    textPokes: false,
    midBurstPsb: true,
    psbPeriod: 300,
    tasks: 4,
    switches: 20,
  },
  /** no TSC: perf cannot time the pokes */
  timeless: { ...COMMON, seed: 5, timeless: true, tasks: 2 },
  /** user code traced but not in the recording (no ELF) */
  userCode: { ...COMMON, seed: 2, tasks: 3, userCode: true },
  /** another event's samples (cycles:k), printed among the synthesized ones */
  cycles: { ...COMMON, seed: 2, tasks: 3, samples: 20 },
  /** switches run through __schedule → __switch_to (perf decodes with sync_switch), four tasks */
  syncSwitch: { ...COMMON, seed: 4, size: 12000, tasks: 4, switches: 12, switchTo: true },
  /** sync_switch without TEXT_POKE records: an error in the kernel turns it off for its CPU; PSB+ in bursts */
  syncSwitchNoPokes: {
    ...COMMON,
    seed: 6,
    size: 12000,
    textPokes: false,
    midBurstPsb: true,
    psbPeriod: 300,
    tasks: 3,
    switches: 12,
    switchTo: true,
  },
  /** sync_switch with a cycles:k event's samples among the synthesized ones */
  syncSwitchCycles: { ...COMMON, seed: 7, size: 12000, tasks: 3, switches: 12, switchTo: true, samples: 20 },
} satisfies Record<string, Omit<SimOptions, 'out'>>;

export type RecordingName = keyof typeof RECORDINGS;

/** Simulate the named recordings into a new temp folder (prefix names it): name → recording directory. */
export function simulateRecordings<K extends RecordingName>(prefix: string, names: readonly K[]): Record<K, string> {
  const dir = tempDir(prefix);
  const out = {} as Record<K, string>;
  for (const name of names) {
    out[name] = join(dir, name);
    simulate({ ...RECORDINGS[name], out: out[name] });
  }
  return out;
}
