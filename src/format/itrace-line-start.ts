/**
 * The parts of perf_sample__fprintf_start for itrace sample lines, as -F
 * asks: comm, tid/pid and cpu; the time ("%5lu.%06lu: ", or with --ns
 * nanoseconds); period, event name (padded to the session's longest) and
 * flags. perfItraceSink keeps each part's bytes while its inputs stay. And
 * the symbol text after an address.
 */
import { formatNsTime, formatPerfTime } from '../machine/time-format.js';
import { zeroPad } from './c-printf.js';
import type { ItraceLineField } from './itrace-fields.js';
import { flagsColumn } from './itrace-flags.js';

/** lineStart's comm, tid/pid and cpu (a sample printing its callchain below: comm unpadded). */
export function whoText(
  f: ReadonlySet<ItraceLineField>,
  cpu: number,
  task: { pid: number; tid: number; comm: string } | undefined,
  chained: boolean,
): string {
  let s = '';
  if (task && f.has('comm')) s += chained ? `${task.comm} ` : `${task.comm.padStart(16)} `;
  if (task && f.has('pid') && f.has('tid')) s += `${String(task.pid).padStart(5)}/${String(task.tid).padEnd(5)} `;
  else if (task && f.has('pid')) s += `${String(task.pid).padStart(5)} `;
  else if (task && f.has('tid')) s += `${String(task.tid).padStart(5)} `;
  if (f.has('cpu')) s += `[${zeroPad(cpu, 3)}] `;
  return s;
}

/** lineStart's time column. */
export function whenText(ns: boolean, f: ReadonlySet<ItraceLineField>, time: bigint | undefined): string {
  if (!f.has('time') || time === undefined) return '';
  return ns ? `${formatNsTime(time).padStart(15)}: ` : `${formatPerfTime(time).padStart(12)}: `;
}

/** lineStart's period, event and flags. */
export function whatText(
  eventWidth: number,
  f: ReadonlySet<ItraceLineField>,
  event: string,
  n: bigint,
  flags: number,
): string {
  let s = '';
  if (f.has('period')) s += `${String(n).padStart(10)} `;
  if (f.has('event')) s += `${event.padStart(eventWidth)}: `;
  if (f.has('flags')) s += flagsColumn(flags);
  return s;
}

/** sample__fprintf_sym / perf_sample__fprintf_addr after the address. */
export function symText(
  symbol: (addr: bigint) => { name: string | undefined; start: bigint; dso: string },
  addr: bigint,
  f: ReadonlySet<ItraceLineField>,
): string {
  let s = '';
  if (!f.has('sym') && !f.has('dso')) return s;
  const r = symbol(addr);
  if (f.has('sym')) {
    s += ' ';
    if (!r.name) s += '[unknown]';
    else s += f.has('symoff') ? `${r.name}+0x${(addr - r.start).toString(16)}` : r.name;
  }
  if (f.has('dso')) s += ` (${r.dso})`;
  return s;
}
