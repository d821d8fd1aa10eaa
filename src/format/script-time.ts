/**
 * The time columns of `perf script` beyond the plain timestamp (perf 6.1
 * builtin-script.c perf_sample__fprintf_start, tod_scnprintf): `--reltime`
 * (since the first line printed with a time), `--deltatime` (since the
 * previous one) and the `tod` field (wall-clock time from HEADER_CLOCK_DATA,
 * in the local time zone, as localtime_r and strftime("%F %H:%M:%S") give).
 */
import { FormatOptionError } from './errors.js';

export interface ClockData {
  todNs: bigint;
  clockidNs: bigint;
}

export class ScriptTimes {
  private initial = 0n;
  private previous = 0n;

  constructor(
    private readonly mode: { reltime?: boolean; deltatime?: boolean },
    private readonly clock: ClockData | undefined,
  ) {}

  /** Whether the times printed differ from the timestamps (the fast printer prints timestamps only). */
  get shifted(): boolean {
    return this.mode.reltime === true || this.mode.deltatime === true;
  }

  /** The time perf prints for a line with timestamp t; updates the reltime/deltatime state as perf does. */
  shown(t: bigint): bigint {
    if (this.mode.reltime) {
      if (!this.initial) this.initial = t;
      return BigInt.asUintN(64, t - this.initial);
    }
    if (this.mode.deltatime) {
      const d = this.previous ? BigInt.asUintN(64, t - this.previous) : 0n;
      this.previous = t;
      return d;
    }
    return t;
  }

  /** The `tod` column's text (without its trailing space). */
  tod(t: bigint, ns: boolean): string {
    const c = this.clock;
    if (!c)
      throw new FormatOptionError(
        "Can't provide 'tod' time, missing clock data. Please record with -k/--clockid option.",
      );
    const todNs = BigInt.asUintN(64, c.todNs + (t - c.clockidNs));
    const sec = todNs / 1_000_000_000n;
    const nsec = todNs - sec * 1_000_000_000n;
    const d = new Date(Number(sec) * 1000);
    const p2 = (n: number): string => String(n).padStart(2, '0');
    const date =
      `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ` +
      `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
    return ns ? `${date}.${String(nsec).padStart(9, '0')}` : `${date}.${String(nsec / 1000n).padStart(6, '0')}`;
  }
}
