/**
 * Why a trace decode over this recording's code image may fail, said before
 * the user wonders: perf stays silent when the image lacks code (no
 * kcore_dir, an address outside it) or when kernel text changes the file
 * does not record (no TEXT_POKE), and shows trace errors later instead.
 * `decode` prints these on stderr.
 */
import { attrFlag } from '../abi/event-attr.js';
import type { Machine } from './from-perf-data.js';

/** x86-64's kernel half: addresses the code image must hold for a kernel trace. */
const KERNEL_START = 0xffff800000000000n;

export interface CodeWarningInput {
  /** perf_event_attr.type of the tracing PMU (intel_pt's pmu type). */
  pmuType: number;
  /** Addresses where the decoder stopped with an error (0n: unknown). */
  errorIps?: readonly bigint[];
}

/** True when some event of the tracing PMU records kernel code. */
export function tracesKernel(m: Machine, pmuType: number): boolean {
  return m.evidence.events.some((e) => e.attr.type === pmuType && !attrFlag(e.attr, 'exclude_kernel'));
}

export function codeImageWarnings(m: Machine, o: CodeWarningInput): string[] {
  const out: string[] = [];
  const kernel = tracesKernel(m, o.pmuType);
  if (kernel && !m.kcore)
    out.push(
      'the trace includes kernel code but the recording has no kcore_dir: the decoder has no kernel text ' +
        '(errors at kernel addresses follow); record with `perf record --kcore` and pass its directory to -i',
    );
  if (kernel && m.pokes.length === 0)
    out.push(
      m.evidence.textPokeEvents.length === 0
        ? 'the trace includes kernel code but no event sets attr.text_poke: code the kernel rewrites while ' +
            'tracing (jump labels, static calls, ftrace, kprobes, BPF) decodes as it was at the start'
        : 'the trace includes kernel code but the file has no TEXT_POKE records (removed, or the kernel ' +
            'withholds them): code the kernel rewrote decodes as it was at the start',
    );
  if (m.kcore) {
    const outside = (o.errorIps ?? []).filter(
      (ip) => ip >= KERNEL_START && !m.image.inBase(ip) && m.image.pokesIn(ip, ip + 1n).length === 0,
    );
    if (outside.length > 0)
      out.push(
        `${outside.length} trace error(s) at kernel addresses kcore_dir does not hold ` +
          `(first 0x${outside[0]!.toString(16)}): ` +
          "the code image misses them; use the recording's own, untrimmed kcore_dir",
      );
  }
  return out;
}
