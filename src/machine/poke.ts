import { PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL } from '../abi/record-type.js';

/**
 * One PERF_RECORD_TEXT_POKE as the code image needs it. The machine layer
 * takes this plain shape (not the reader's record) so it can be fed from a
 * file, a simulator or a benchmark alike; see from-perf-data.ts for the glue.
 */
export interface Poke {
  /** sample_id time (perf clock, ns); 0n when the file has no time. */
  time: bigint;
  /** sample_id cpu, -1 when absent. */
  cpu: number;
  addr: bigint;
  /** old_len bytes: what the kernel replaced. Empty for a new trampoline. */
  oldBytes: Uint8Array;
  /** new_len bytes: what it wrote. Empty when code is removed. */
  newBytes: Uint8Array;
  /** Where the record starts in the file: the tie-break for equal times. */
  fileOffset: number;
  /** header.misc; perf applies only cpumode PERF_RECORD_MISC_KERNEL. */
  misc: number;
  /** sample_id's event id (IDENTIFIER or ID), when the attr records one: tells which event delivered it. */
  id?: bigint;
}

/** perf's machine__process_text_poke ignores any other cpumode. */
export function isKernelPoke(p: Poke): boolean {
  return (p.misc & PERF_RECORD_MISC_CPUMODE_MASK) === PERF_RECORD_MISC_KERNEL;
}

/** The address range a poke touches: old and new bytes both start at addr. */
export function pokeEnd(p: Poke): bigint {
  return p.addr + BigInt(Math.max(p.oldBytes.length, p.newBytes.length));
}

/** A KSYMBOL record, kept to name trampolines (type OOL = 2) and BPF code. */
export interface KernelSymbolEvent {
  time: bigint;
  addr: bigint;
  len: number;
  ksymType: number;
  flags: number;
  name: string;
  fileOffset: number;
}
