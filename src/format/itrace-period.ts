/**
 * Which instructions perf samples for `--itrace=i<period>` (intel-pt.c and
 * intel-pt-decoder.c: intel_pt_next_sample, intel_pt_next_period,
 * intel_pt_sample_insn), and the period each sample carries (instructions
 * since the CPU's previous instruction sample).
 *
 * - a period of 0 (`i0ns`) samples every instruction (perf turns it into an
 *   instruction period of 1);
 * - `Ni`: every Nth instruction walked;
 * - `Nt` / a time (`i100ns`, `i10us`, plain `i` = 100 µs): in TSC ticks, the
 *   time converted with perf's intel_pt_ns_to_ticks and rounded down to a
 *   power of two; the decoder counts one tick per instruction since the last
 *   TSC and samples the instruction that crosses a multiple of the period.
 */
import type { PtTimeConv } from '../intelpt/flow/time-conv.js';
import type { ItracePeriod } from './itrace-options.js';
import type { InsnClock } from '../intelpt/flow/flow-types.js';

interface CpuPeriod {
  /** Instructions walked on this CPU (perf's tot_insn_cnt) and at the last sample. */
  tot: bigint;
  lastTot: bigint;
  /** Instructions since the last sample (instruction periods). */
  count: bigint;
  /** Tick periods: the TSC the count runs from, instructions since it, perf's last_masked_timestamp. */
  tsc: bigint;
  sinceTsc: bigint;
  lastMasked: bigint;
  continuous: boolean;
  /** Instructions left in the current walk before its sample (0: a walk starts, compute it). */
  left: bigint;
}

function lowerPowerOf2(x: bigint): bigint {
  let p = 1n;
  while (p * 2n <= x) p *= 2n;
  return p;
}

export class InsnPeriod {
  /** Every instruction is a sample. */
  readonly every: boolean;
  /** Tick-based (time) period. */
  readonly ticks: boolean;
  private readonly n: bigint;
  private readonly mask: bigint;
  private readonly cpus = new Map<number, CpuPeriod>();
  /** Every-instruction mode: instructions walked but not sampled (at errors) since a CPU's last sample. */
  private readonly lost = new Map<number, bigint>();

  constructor(p: ItracePeriod, tc: PtTimeConv | undefined) {
    let n = p.n;
    let ticks = p.kind !== 'instructions';
    if (p.kind === 'ns') {
      // intel_pt_ns_to_ticks (untimed files have time_mult 1 in perf)
      const mult = BigInt(tc?.mult ?? 1);
      const shift = BigInt(tc?.shift ?? 0);
      n = ((n / mult) << shift) + ((n % mult) << shift) / mult;
    }
    if (!n) {
      ticks = false;
      n = 1n;
    }
    this.ticks = ticks;
    this.n = ticks ? lowerPowerOf2(n) : n;
    this.mask = ~(this.n - 1n);
    this.every = !ticks && n === 1n;
  }

  private cpu(c: number): CpuPeriod {
    let s = this.cpus.get(c);
    if (!s) {
      s = { tot: 0n, lastTot: 0n, count: 0n, tsc: -1n, sinceTsc: 0n, lastMasked: 0n, continuous: false, left: 0n };
      this.cpus.set(c, s);
    }
    return s;
  }

  /**
   * One instruction walked (step, or everyStep in every-instruction mode): its sample's period, 0n when none,
   * or -1n when perf's queue yields at the sample's state (`at.hold`): the step is then taken back, for the
   * decoder to walk the instruction again on resume.
   */
  sample(c: number, tsc: bigint, branch: boolean, at?: InsnClock, nth = 0): bigint {
    if (this.every) {
      // every-instruction mode keeps no per-CPU state but the lost count: taken back by leaving it
      const lost = this.lost.size ? this.lost.get(c) : undefined;
      if (at?.hold?.(tsc)) return -1n;
      if (lost === undefined) return 1n;
      this.lost.delete(c);
      return 1n + lost;
    }
    const saved = at?.hold ? { s: { ...this.cpu(c) }, lost: this.lost.get(c) } : undefined;
    const n = this.every ? this.everyStep(c) : this.step(c, tsc, branch, false, at, nth);
    if (!n || !saved || !at?.hold?.(tsc)) return n;
    this.cpus.set(c, saved.s);
    if (saved.lost === undefined) this.lost.delete(c);
    else this.lost.set(c, saved.lost);
    return -1n;
  }

  /** Tracing stopped or decoding restarted: perf's continuous_period = false. */
  stop(c: number): void {
    if (!this.ticks) return;
    const s = this.cpu(c);
    s.continuous = false;
    s.left = 0n;
  }

  /**
   * One instruction walked at TSC `tsc` (`branch`: it ends perf's walk, the
   * next one computes its sample point afresh; `lost`: walked where an error was
   * found, never sampled; `at`: the decoder's clock before the run the instruction
   * is the `nth` of): 0n when not sampled, else the sample's period.
   */
  step(c: number, tsc: bigint, branch: boolean, lost = false, at?: InsnClock, nth = 0): bigint {
    if (this.every) {
      if (!lost) return this.everyStep(c);
      this.lost.set(c, (this.lost.get(c) ?? 0n) + 1n);
      return 0n;
    }
    const s = this.cpu(c);
    s.tot++;
    let hit: boolean;
    if (!this.ticks) {
      s.count++;
      hit = s.count >= this.n;
      if (hit) s.count = 0n;
    } else {
      if (at) {
        // the decoder's own timestamp and count (MTC and CYC move it where no state is reported)
        s.tsc = at.ts;
        s.sinceTsc = BigInt(at.cnt + nth);
      } else if (tsc !== s.tsc) {
        s.tsc = tsc;
        s.sinceTsc = 0n;
      }
      // intel_pt_walk_insn: the sample point is computed when a walk starts and counted down
      if (!s.left) s.left = this.nextPeriod(s, s.tsc + s.sinceTsc);
      s.left--;
      hit = s.left === 0n;
      s.sinceTsc++;
      if (branch) s.left = 0n;
      if (hit) {
        const ts = s.tsc + s.sinceTsc;
        const masked = ts & this.mask;
        if (masked > s.lastMasked) s.lastMasked = masked;
        else s.lastMasked += this.n;
      }
    }
    // a sample due where an error was found is lost: the next one's period covers it too
    if (!hit || lost) return 0n;
    const period = s.tot - s.lastTot;
    s.lastTot = s.tot;
    return period;
  }

  /** Every-instruction mode: the period of the next sample (1, more after instructions lost at errors). */
  everyStep(c: number): bigint {
    const x = this.lost.get(c);
    if (x === undefined) return 1n;
    this.lost.delete(c);
    return 1n + x;
  }

  /** intel_pt_next_period: instructions to the next sample, counting this one. */
  private nextPeriod(s: CpuPeriod, now: bigint): bigint {
    let ts = now;
    let masked = ts & this.mask;
    if (s.continuous) {
      if (masked > s.lastMasked) return 1n;
    } else {
      ts += 1n;
      masked = ts & this.mask;
      if (masked > s.lastMasked) {
        s.lastMasked = masked;
        s.continuous = true;
      }
    }
    if (masked < s.lastMasked) return this.n;
    return this.n - (ts - masked);
  }
}
