/**
 * What `perf script` 6.1 prints for a `perf stat record` file (builtin-script.c
 * process_stat_round_event → __process_stat): at each STAT_ROUND, for every
 * event in file order, one line per thread × CPU of its counts, under a header
 * printed once:
 *
 *   CPU   THREAD             VAL             ENA             RUN            TIME EVENT
 *    -1    10191       251123562       251142935       251142935       321787459 cpu-clock
 *
 * The counts are the last STAT record of each (event, cpu, thread), processed
 * as perf_stat_process_counter does first: with an aggregation mode other than
 * global (`-A`, `--per-thread`, `--per-core`…) each count becomes the delta
 * from the previous round and, when the recording scaled counters, is scaled
 * by ena/run, in place. The CPU and thread maps come from the CPU_MAP and
 * THREAD_MAP records (the first of each; perf ignores the others), an event's
 * own CPUs from an EVENT_UPDATE CPUS record. -F and the sample filters do not
 * apply (perf prints the same lines whatever they say).
 */
import type { PerfRecord } from '../perfdata/index.js';
import type { Session } from '../session/session.js';
import { FormatOptionError } from './errors.js';

type Rec<K extends PerfRecord['kind']> = Extract<PerfRecord, { kind: K }>;

interface Counts {
  val: bigint;
  ena: bigint;
  run: bigint;
}

/** enum aggr_mode (util/stat.h, perf 6.1) */
const AGGR_NONE = 0;
const AGGR_GLOBAL = 1;
const AGGR_UNSET = 6;
/** enum perf_stat_config_term */
const TERM_AGGR_MODE = 0n;
const TERM_SCALE = 2n;

const u64 = (v: bigint): bigint => BigInt.asUintN(64, v);

interface EvselCounts {
  cpus: number[];
  counts: Counts[][];
  prev: Counts[][];
}

export class StatScript {
  private cpus: number[] | undefined;
  private threads: number[] | undefined;
  /** static struct perf_stat_config in builtin-script.c: zeroed until STAT_CONFIG */
  private aggrMode = AGGR_NONE;
  private scale = false;
  private readonly ownCpus = new Map<number, number[]>();
  private evsels: EvselCounts[] | undefined;
  private headerPrinted = false;

  constructor(
    private readonly s: Session,
    private readonly out: (s: string) => void,
  ) {}

  private evselOfId(id: bigint): number {
    return this.s.file.attrs.findIndex((a) => a.ids.includes(id));
  }

  /** Handle one of the stat records (types 73–78); false when the record is not one of them. */
  handle(rec: PerfRecord, json = false): boolean {
    if (json && rec.kind === 'stat_round') {
      throw new FormatOptionError('--json: perf stat record files (STAT_ROUND counts) have no JSON form yet');
    }
    switch (rec.kind) {
      case 'thread_map':
        this.threads ??= rec.entries.map((e) => Number(BigInt.asIntN(32, e.pid)));
        this.setMaps();
        return true;
      case 'cpu_map':
        this.cpus ??= rec.data.cpus;
        this.setMaps();
        return true;
      case 'event_update':
        if (rec.cpus) this.ownCpus.set(this.evselOfId(rec.id), rec.cpus.cpus);
        return true;
      case 'stat_config':
        this.config(rec);
        return true;
      case 'stat':
        this.stat(rec);
        return true;
      case 'stat_round':
        this.round(rec.time);
        return true;
      default:
        return false;
    }
  }

  private config(rec: Rec<'stat_config'>): void {
    for (const e of rec.entries) {
      if (e.tag === TERM_AGGR_MODE) this.aggrMode = Number(e.val);
      else if (e.tag === TERM_SCALE) this.scale = e.val !== 0n;
    }
  }

  /** set_maps: once both maps are known, every event gets its CPUs (__perf_evlist__propagate_maps) and counts. */
  private setMaps(): void {
    const cpus = this.cpus;
    const threads = this.threads;
    if (!cpus || !threads || this.evsels) return;
    const empty = cpus[0] === undefined || cpus[0] === -1;
    const zero = (n: number): Counts[][] =>
      Array.from({ length: n }, () => threads.map(() => ({ val: 0n, ena: 0n, run: 0n })));
    this.evsels = this.s.file.attrs.map((_, i) => {
      const own = this.ownCpus.get(i);
      const c = own && !empty ? own : cpus;
      return { cpus: c, counts: zero(c.length), prev: zero(c.length) };
    });
  }

  private stat(rec: Rec<'stat'>): void {
    const i = this.evselOfId(rec.id);
    const ev = this.evsels?.[i];
    if (i < 0 || !ev) throw new FormatOptionError('Failed to resolve counter for stat event.');
    const name = this.s.eventNameAt(i);
    const idx = ev.cpus.indexOf(rec.cpu);
    if (idx < 0) throw new FormatOptionError(`Invalid CPU ${rec.cpu} for event ${name}.`);
    const cell = ev.counts[idx]?.[rec.thread];
    if (!cell || rec.thread < 0) {
      throw new FormatOptionError(
        `Failed to find perf count for CPU ${rec.cpu} thread ${rec.thread} on event ${name}.`,
      );
    }
    Object.assign(cell, { val: rec.val, ena: rec.ena, run: rec.run });
  }

  /** process_counter_values for one count, in place: deltas and scaling outside global aggregation. */
  private process(c: Counts, prev: Counts): void {
    if (this.aggrMode === AGGR_GLOBAL || this.aggrMode >= AGGR_UNSET) return;
    const raw = { ...c };
    c.val = u64(c.val - prev.val);
    c.ena = u64(c.ena - prev.ena);
    c.run = u64(c.run - prev.run);
    Object.assign(prev, raw);
    if (!this.scale) return;
    if (c.run === 0n) c.val = 0n;
    else if (c.run < c.ena) c.val = BigInt(Math.trunc((Number(c.val) * Number(c.ena)) / Number(c.run)));
  }

  private round(time: bigint): void {
    if (!this.evsels) return;
    const threads = this.threads ?? [];
    const pad = (v: bigint | number | string, w: number): string => String(v).padStart(w);
    this.evsels.forEach((ev, i) => {
      for (let t = 0; t < threads.length; t++)
        for (let k = 0; k < ev.cpus.length; k++) this.process(ev.counts[k]![t]!, ev.prev[k]![t]!);
      if (!this.headerPrinted) {
        const cols = ['VAL', 'ENA', 'RUN', 'TIME'].map((h) => pad(h, 15)).join(' ');
        this.out(`${pad('CPU', 3)} ${pad('THREAD', 8)} ${cols} EVENT\n`);
        this.headerPrinted = true;
      }
      const name = this.s.eventNameAt(i);
      let text = '';
      for (let t = 0; t < threads.length; t++) {
        for (let k = 0; k < ev.cpus.length; k++) {
          const c = ev.counts[k]![t]!;
          const nums = [c.val, c.ena, c.run, time].map((v) => pad(v, 15)).join(' ');
          text += `${pad(ev.cpus[k]!, 3)} ${pad(threads[t]!, 8)} ${nums} ${name}\n`;
        }
      }
      this.out(text);
    });
  }
}
