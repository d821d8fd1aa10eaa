/**
 * Runs the generated program on simulated CPUs and writes, per CPU, the Intel
 * PT packets the hardware would emit (kernel-only tracing) plus the ground
 * truth: every instruction executed, with its TSC.
 *
 * Each CPU alternates between user time (trace disabled) and kernel bursts:
 * TSC, MODE.Exec, TIP.PGE(entry) … sysretq, TIP.PGD — the shape of a syscall
 * under `perf record -e intel_pt//k`.
 *
 * Jump-label flips follow the INT3 protocol of the seed. For a flip at t0:
 *   [t0, t2)  the site holds INT3: a CPU that reaches it traps —
 *             FUP(site), TIP(asm_exc_int3), handler, iretq → TIP(emulated
 *             target of the NEW instruction);
 *   t1        TEXT_POKE record (old bytes → new bytes);
 *   ≥ t2      the new instruction runs natively.
 * t1 - t0 = t2 - t1 = D > the longest possible burst, and every burst starts
 * with a TSC packet. So a burst that starts before t1 ends before t2 and
 * never meets the new bytes, and one that starts at or after t1 never meets
 * the old ones. That is what lets perf — which applies a poke only at the
 * first TSC at or after its time (perf need 6 in docs/design.md) — decode with 0 errors.
 */
import { PacketEncoder } from '../intelpt/packet-encoder.js';
import { Kind } from './assembler.js';
import type { Program } from './codegen.js';
import { Rng } from './rng.js';

export interface Flip {
  site: number;
  /** INT3 written. */
  t0: number;
  /** TEXT_POKE record time (TSC). */
  t1: number;
  /** New instruction live. */
  t2: number;
  /** State after the flip: 0 NOP, 1 JMP. */
  to: 0 | 1;
}

export interface Chunk {
  start: number;
  end: number;
  /** TSC of the first packet-timed event in the chunk. */
  firstTsc: number;
}

export interface CpuRun {
  cpu: number;
  trace: Uint8Array;
  chunks: Chunk[];
  insns: number;
  bursts: number;
  traps: number;
  /** Ground truth (when kept): instruction offsets from the text base, and their TSC. */
  truthOff?: Uint32Array;
  truthTsc?: Float64Array;
  /** Context switches run (ExecOptions.switchAt): TSCs at `__perf_event_task_sched_out` and after `__switch_to`. */
  switches: { out: number; in: number }[];
}

export interface ExecOptions {
  seed: number;
  cpu: number;
  /** First TSC of this CPU's timeline. */
  startTsc: number;
  /** Stop starting bursts at this TSC. */
  endTsc: number;
  flips: Flip[];
  /** Bytes of trace between PSBs (checked at burst starts). */
  psbPeriod?: number;
  /** Target AUXTRACE buffer size; buffers are cut at PSBs. */
  bufferSize?: number;
  /** Compress returns into TNT bits (config noretcomp = 0). */
  retCompression?: boolean;
  /** Also emit PSB+ inside bursts (with the FUP of the next instruction), like hardware does. */
  midBurstPsb?: boolean;
  keepTruth?: boolean;
  /** TSC from which the trampoline exists and may be called (Infinity = never). */
  trampolineLive?: number;
  /** User-mode ticks between bursts: [min, max]. */
  gap?: [number, number];
  /**
   * Trace user mode too, in code at this address whose bytes the recording does not hold (a user
   * binary without its ELF): tracing stays on between bursts, sysret is a TIP into it, the next
   * syscall a TIP out of it, with TNT bits and indirect branches of the unknown code in between.
   */
  userBase?: bigint;
  /**
   * Power-event packets, as hardware with the pwr_evt config bit writes them: a CBR (core:bus ratio) in
   * every PSB+ and at frequency changes between bursts, and now and then a C-state visit between bursts
   * (PWRE, EXSTOP, PWRX). Drawn from a random stream of their own: without them the trace is unchanged.
   */
  power?: boolean;
  /**
   * TSCs (ascending) from which a context switch is due: the next syscall through the program's switch path
   * (Program.sched) calls `__schedule` for it.
   */
  switchAt?: number[];
  /** Timing packets beside TSC (SimTiming): TMA after each TSC, MTC at CTC edges, CYC packets. */
  timing?: SimTiming;
}

/**
 * The clocks behind the timing packets, consistent with the TSC: the crystal clock counter
 * CTC = floor(TSC · ctcD / ctcN) (AUXTRACE_INFO's tsc_ctc_ratio_n/d), an MTC each time CTC bit `mtcShift`
 * (the config's mtc_period) ticks, and with `cyc` a CYC packet (core cycles: CBR / max non-turbo ratio per
 * TSC tick, 1 without power events) before each MTC and before an IP packet once `cyc` cycles have passed.
 */
export interface SimTiming {
  mtcShift?: number;
  ctcN: number;
  ctcD: number;
  cyc?: number;
  /** The max non-turbo ratio cycles per TSC tick scale by (with CBR). */
  maxNonTurbo: number;
}

class Growable {
  off = new Uint32Array(1 << 16);
  tsc = new Float64Array(1 << 16);
  n = 0;
  push(o: number, t: number): void {
    if (this.n === this.off.length) {
      const no = new Uint32Array(this.n * 2);
      no.set(this.off);
      this.off = no;
      const nt = new Float64Array(this.n * 2);
      nt.set(this.tsc);
      this.tsc = nt;
    }
    this.off[this.n] = o;
    this.tsc[this.n++] = t;
  }
}

/** State of a site at a TSC: 0 NOP, 1 JMP, 2|to = INT3 (trap, emulating `to`). */
export function siteStateAt(initial: 0 | 1, flips: Flip[], tsc: number): number {
  let s: number = initial;
  for (const f of flips) {
    if (tsc < f.t0) break;
    s = tsc < f.t2 ? 2 | f.to : f.to;
  }
  return s;
}

export function executeCpu(p: Program, o: ExecOptions): CpuRun {
  const rng = new Rng((o.seed * 7919 + o.cpu * 104729) >>> 0);
  const enc = new PacketEncoder({ initialCapacity: 1 << 16 });
  const psbPeriod = o.psbPeriod ?? 1024;
  const bufferSize = o.bufferSize ?? 1 << 16;
  const retComp = o.retCompression ?? true;
  const [gapMin, gapMax] = o.gap ?? [40, 400];
  const truth = o.keepTruth ? new Growable() : undefined;
  const tLive = o.trampolineLive ?? Infinity;
  const base = p.base;
  const flipsBySite: Flip[][] = p.sites.map((s) => o.flips.filter((f) => f.site === s.id).sort((a, b) => a.t0 - b.t0));
  const { kind, len, target, off, byOff, site, indirect } = p;
  const loopCount = new Int32Array(off.length);
  const stack = new Int32Array(256);
  const chunks: Chunk[] = [];
  let chunkStart = 0;
  let chunkTsc = -1;
  let lastPsb = -Infinity;
  let tsc = o.startTsc;
  let insns = 0;
  let bursts = 0;
  let traps = 0;
  const user = o.userBase;
  const switchAt = o.switchAt ?? [];
  let nextSwitch = 0;
  const switches: CpuRun['switches'] = [];
  const schedOut = p.sched?.ptss ?? -1;
  const schedIn = p.sched?.back ?? -1;
  const pwr = o.power ? new Rng((o.seed * 31337 + o.cpu * 7) >>> 0) : undefined;
  /** The core:bus ratio (with a 2 GHz TSC and max non-turbo ratio 20: 100 MHz steps). */
  let ratio = pwr ? pwr.int(8, 40) : 0;
  const tm = o.timing;
  const ctcOf = (t: number): number => (tm ? Math.floor((t * tm.ctcD) / tm.ctcN) : 0);
  /** The MTC-period count (CTC >> mtcShift) last announced; core cycles not in a CYC yet (counted while tracing). */
  let mtcAt = 0;
  let cycles = 0;
  /** After a TSC: TMA with CTC[15:0] and the TSC ticks since CTC last ticked (its fast counter). */
  const tma = (): void => {
    if (!tm) return;
    const ctc = ctcOf(tsc);
    enc.tma(ctc & 0xffff, tsc - Math.ceil((ctc * tm.ctcN) / tm.ctcD));
    mtcAt = tm.mtcShift === undefined ? 0 : ctc >>> tm.mtcShift;
  };
  const cycPacket = (min: number): void => {
    if (!tm?.cyc || cycles < Math.max(1, min)) return;
    const n = Math.floor(cycles);
    enc.cyc(n);
    cycles -= n;
  };
  /** One TSC tick of traced execution: core cycles pass, and an MTC when the CTC bit ticks. */
  const tick = (): void => {
    if (!tm) return;
    cycles += pwr ? ratio / tm.maxNonTurbo : 1;
    if (tm.mtcShift === undefined) return;
    const m = ctcOf(tsc) >>> tm.mtcShift;
    if (m === mtcAt) return;
    mtcAt = m;
    enc.flushTnt();
    cycPacket(1);
    enc.mtc(m & 0xff);
  };
  /** Before an IP packet: the cycles so far once past the threshold. */
  const cycIp = (): void => {
    if (!tm?.cyc) return;
    enc.flushTnt();
    cycPacket(tm.cyc);
  };
  /** In user mode with tracing on: the user IP (undefined before tracing starts). */
  let userIp: bigint | undefined;
  const userGap = (): void => {
    if (user === undefined || userIp === undefined) return;
    // the unknown user code's branches: TNT bits and now and then an indirect branch
    for (let n = rng.int(0, 12); n > 0; n--) enc.branch(rng.chance(0.5));
    if (rng.chance(0.4)) {
      userIp = user + BigInt(rng.int(0, 0xfff));
      enc.tip(userIp);
    }
  };

  while (true) {
    tsc += rng.int(gapMin, gapMax);
    if (tsc >= o.endTsc) break;
    // Sync point: cut the AUXTRACE buffer here if it is big enough, PSB+ if due.
    if (enc.pos - lastPsb >= psbPeriod) {
      if (enc.pos - chunkStart >= bufferSize) {
        enc.padTo(8);
        chunks.push({ start: chunkStart, end: enc.pos, firstTsc: chunkTsc });
        chunkStart = enc.pos;
        chunkTsc = -1;
      }
      lastPsb = enc.pos;
      enc.flushTnt();
      enc.psb();
      enc.tsc(BigInt(tsc));
      tma();
      if (pwr) enc.cbr(ratio);
      if (userIp !== undefined) {
        // tracing is on in user mode: the PSB+ names where it is
        enc.modeExec(true);
        enc.fup(userIp);
      }
      enc.psbend();
    } else {
      enc.tsc(BigInt(tsc));
      tma();
    }
    if (pwr) {
      if (pwr.chance(0.1)) {
        // the CPU slept since the last syscall: C-state entry, execution stopped, exit with a wake reason
        const deepest = pwr.int(1, 6);
        enc.pwre(deepest, pwr.int(0, 3), pwr.chance(0.3));
        enc.exstop(false);
        enc.pwrx(pwr.int(1, deepest), deepest, [1, 4, 8][pwr.int(0, 2)]!);
      }
      if (pwr.chance(0.15)) {
        ratio = pwr.int(8, 40);
        enc.cbr(ratio);
      }
    }
    userGap();
    if (chunkTsc < 0) chunkTsc = tsc;
    bursts++;
    if (userIp !== undefined)
      enc.tip(base + BigInt(p.entry)); // the syscall
    else {
      enc.modeExec(true);
      if (user !== undefined) {
        // tracing starts in user mode, before the first syscall
        userIp = user + BigInt(rng.int(0, 0xfff));
        enc.tipPge(userIp);
        userGap();
        enc.tip(base + BigInt(p.entry));
      } else enc.tipPge(base + BigInt(p.entry));
    }
    let ip = p.entry;
    let sp = 0;
    let depth = 0; // compressible calls outstanding
    let iretTo = -1;
    const burstStart = tsc;
    for (;;) {
      if (o.midBurstPsb && enc.pos - lastPsb >= psbPeriod) {
        // PSB+ while tracing: TNT flushed first, the FUP names the next
        // instruction (perf need 8 in docs/design.md); return compression restarts after it.
        lastPsb = enc.pos;
        enc.psb();
        enc.tsc(BigInt(tsc));
        tma();
        if (pwr) enc.cbr(ratio);
        enc.modeExec(true);
        enc.fup(base + BigInt(ip));
        enc.psbend();
        depth = 0;
      }
      const i = byOff[ip]!;
      if (i < 0) throw new Error(`sim: cpu ${o.cpu} ran into a non-instruction at +0x${ip.toString(16)}`);
      const k = kind[i]!;
      if (ip === schedOut) switches.push({ out: tsc, in: tsc });
      else if (ip === schedIn) switches[switches.length - 1]!.in = tsc;
      if (k === Kind.site) {
        const s = site[i]!;
        const st = siteStateAt(p.sites[s]!.initial, flipsBySite[s]!, tsc);
        if (st & 2) {
          // INT3 phase: trap; the instruction at the site does not execute.
          traps++;
          cycIp();
          enc.fup(base + BigInt(ip));
          enc.tip(base + BigInt(p.int3Handler));
          iretTo = st & 1 ? target[i]! : ip + len[i]!;
          ip = p.int3Handler;
          continue;
        }
        truth?.push(ip, tsc);
        tsc++;
        tick();
        insns++;
        ip = st === 1 ? target[i]! : ip + len[i]!;
        continue;
      }
      truth?.push(ip, tsc);
      tsc++;
      tick();
      insns++;
      switch (k) {
        case Kind.other:
          ip += len[i]!;
          break;
        case Kind.jccIf: {
          const taken = rng.chance(0.5);
          enc.branch(taken);
          ip = taken ? target[i]! : ip + len[i]!;
          break;
        }
        case Kind.jccSched: {
          const due = nextSwitch < switchAt.length && switchAt[nextSwitch]! <= tsc;
          if (due) nextSwitch++;
          enc.branch(!due);
          ip = due ? ip + len[i]! : target[i]!;
          break;
        }
        case Kind.jccLoop: {
          const taken = loopCount[i]! < p.loopCap && rng.chance(0.7);
          loopCount[i] = taken ? loopCount[i]! + 1 : 0;
          enc.branch(taken);
          ip = taken ? target[i]! : ip + len[i]!;
          break;
        }
        case Kind.jmp:
          ip = target[i]!;
          break;
        case Kind.call:
          stack[sp++] = ip + len[i]!;
          depth++;
          ip = target[i]!;
          break;
        case Kind.icall: {
          stack[sp++] = ip + len[i]!;
          depth++;
          ip = rng.pick(indirect.get(i)!);
          // Nothing calls the trampoline before it is written.
          while (ip === p.trampoline.off && !(tsc >= tLive)) ip = rng.pick(indirect.get(i)!);
          cycIp();
          enc.tip(base + BigInt(ip));
          break;
        }
        case Kind.ijmp:
          ip = rng.pick(indirect.get(i)!);
          cycIp();
          enc.tip(base + BigInt(ip));
          break;
        case Kind.ret: {
          ip = stack[--sp]!;
          if (retComp && depth > 0) {
            depth--;
            enc.branch(true);
          } else {
            cycIp();
            enc.tip(base + BigInt(ip));
          }
          break;
        }
        case Kind.iret:
          ip = iretTo;
          iretTo = -1;
          cycIp();
          enc.tip(base + BigInt(ip));
          break;
        case Kind.sysret:
          cycIp();
          if (user !== undefined) {
            userIp = user + BigInt(rng.int(0, 0xfff));
            enc.tip(userIp);
          } else enc.tipPgd(null);
          break;
        default:
          throw new Error(`sim: unknown instruction kind ${k}`);
      }
      if (k === Kind.sysret) break;
      if (tsc - burstStart > p.maxBurstInsns)
        throw new Error(`sim: burst longer than its static bound ${p.maxBurstInsns}`);
    }
  }
  enc.flushTnt();
  enc.padTo(8);
  if (enc.pos > chunkStart) chunks.push({ start: chunkStart, end: enc.pos, firstTsc: chunkTsc < 0 ? tsc : chunkTsc });
  const run: CpuRun = { cpu: o.cpu, trace: enc.bytes(), chunks, insns, bursts, traps, switches };
  if (truth) {
    run.truthOff = truth.off.slice(0, truth.n);
    run.truthTsc = truth.tsc.slice(0, truth.n);
  }
  return run;
}
