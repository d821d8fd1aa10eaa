/**
 * Generates the simulator's kernel text: real x86-64 machine code assembled
 * with iced-x86 at kernel addresses, shaped like the code Intel PT traces —
 * functions with prologues, if/else, loops, switch-style indirect jumps,
 * direct and indirect calls, and jump-label sites in both sizes:
 *
 *   5-byte: `0f 1f 44 00 00` (NOP5) ↔ `e9 rel32` into an out-of-line block
 *           after the function that jumps back (static_branch_unlikely);
 *   2-byte: `66 90` ↔ `eb rel8` over a short inline block.
 *
 * Every guarded block holds a conditional branch, so a decoder that follows
 * stale bytes at a site consumes the wrong TNT bits and reports an error —
 * the seed's experiment needs the mismatch to be visible.
 *
 * The generator also records, per instruction, what the executor needs to run
 * it (kind, static target, indirect targets), so the executor never decodes.
 */
import { Code, Instruction, Register } from '../x86/iced.js';
import { Assembler, enc, Kind, NOP2, NOP5 } from './assembler.js';
import { Rng } from './rng.js';

export const KERNEL_TEXT_BASE = 0xffffffff81000000n;

export interface JumpSite {
  id: number;
  /** Offset from the text base. */
  off: number;
  len: 2 | 5;
  /** Where the JMP form goes (offset). */
  target: number;
  nopBytes: Uint8Array;
  jmpBytes: Uint8Array;
  /** 0 = NOP, 1 = JMP at the start of the run (what kcore holds). */
  initial: 0 | 1;
  /** Function the site is in. */
  func: string;
}

export interface SimFunction {
  name: string;
  off: number;
  size: number;
  level: number;
}

export interface Program {
  base: bigint;
  /** Text bytes at the start of the run (all sites in their initial state). */
  code: Uint8Array;
  /** Per-instruction tables, in address order. */
  off: Int32Array;
  len: Uint8Array;
  kind: Uint8Array;
  /** Static target offset (jcc/jmp/call/site JMP form), else -1. */
  target: Int32Array;
  /** Site id for Kind.site, else -1. */
  site: Int16Array;
  /** Candidate targets of indirect calls/jumps, by instruction index. */
  indirect: Map<number, number[]>;
  /** Instruction index by offset (-1 inside an instruction / padding). */
  byOff: Int32Array;
  functions: SimFunction[];
  sites: JumpSite[];
  entry: number;
  int3Handler: number;
  /**
   * Code created during the run (a BPF-trampoline-like function): the
   * initial image holds INT3 padding there; a TEXT_POKE with old_len 0
   * writes `bytes`, and the entry's indirect call may reach it afterwards.
   */
  trampoline: { off: number; bytes: Uint8Array; name: string };
  /** Upper bound of instructions one burst (entry to sysret) can execute, traps included. */
  maxBurstInsns: number;
  /** Loop back-edges are taken at most this many times in a row. */
  loopCap: number;
  /**
   * The context-switch path (CodegenOptions.contextSwitch): the entry of `__perf_event_task_sched_out` (where
   * perf writes the switch-out record) and the instruction `__switch_to` returns to (the switch-in record).
   */
  sched?: { ptss: number; back: number };
}

export interface CodegenOptions {
  seed: number;
  /** Jump-label sites to create (half 5-byte, half 2-byte). */
  sites?: number;
  /** Functions per call level below the entry. */
  levels?: number[];
  /**
   * A kernel context-switch path, as perf's sync_switch expects it: the syscall entry calls `__schedule`
   * when a switch is due (Kind.jccSched), which calls `__perf_event_task_sched_out`, then `__switch_to_asm`,
   * which jumps to `__switch_to`.
   */
  contextSwitch?: boolean;
}

/**
 * Build the program. Call levels: the entry (level 0) calls level-1 functions
 * indirectly, level n calls level n+1; the graph is acyclic so every burst is
 * bounded, which the flip schedule relies on (see executor.ts).
 */
export function generateProgram(opts: CodegenOptions): Program {
  const rng = new Rng(opts.seed ^ 0x5eed);
  const levels = opts.levels ?? [4, 6, 8];
  const nSites = opts.sites ?? 12;
  const loopCap = 5;
  const asm = new Assembler(rng);
  const base = KERNEL_TEXT_BASE;

  const names: string[][] = [['entry_SYSCALL_64']];
  levels.forEach((n, li) => {
    const lv: string[] = [];
    for (let i = 0; i < n; i++) lv.push(`pp_l${li + 1}_fn${i}`);
    names.push(lv);
  });
  const siteInfo: { id: number; len: 2 | 5; target: string; label: string; func: string; initial: 0 | 1 }[] = [];
  // Spread the sites over the functions of levels ≥ 1 (entry stays simple).
  const siteHome = new Map<string, number[]>();
  const candidates = names.slice(1).flat();
  for (let s = 0; s < nSites; s++) {
    const f = candidates[(s * 7 + 3) % candidates.length]!;
    siteHome.set(f, [...(siteHome.get(f) ?? []), s]);
  }
  // bound[name] = max instructions executed by one call of the function.
  const bound = new Map<string, number>();
  const int3Len = 6; // handler: push, 3 fillers, pop, iretq

  const statements = (fname: string, level: number, ool: (() => void)[]): number => {
    let cost = 0;
    const callees = names[level + 1];
    const mySites = [...(siteHome.get(fname) ?? [])];
    const nStmts = rng.int(3, 7) + mySites.length;
    let calls = 0;
    for (let i = 0; i < nStmts; i++) {
      const choice = mySites.length && rng.chance(0.4) ? 99 : rng.int(0, 6);
      if (choice === 99 || (i === nStmts - 1 && mySites.length)) {
        const id = mySites.shift()!;
        const len: 2 | 5 = id % 2 === 0 ? 5 : 2;
        const initial: 0 | 1 = rng.chance(0.5) ? 1 : 0;
        const info = { id, len, target: '', label: asm.fresh('site'), func: fname, initial };
        siteInfo.push(info);
        if (len === 5) {
          const oolLabel = asm.fresh('ool');
          const back = asm.fresh('back');
          info.target = oolLabel;
          asm.label(info.label);
          asm.site(id, 5, oolLabel, () => info.initial === 1);
          asm.label(back);
          // The out-of-line block sits after the function's ret.
          let oc = 0;
          ool.push(() => {
            asm.label(oolLabel);
            asm.fillers(1, 2);
            const skip = asm.fresh('oskip');
            asm.jcc(Kind.jccIf, skip);
            asm.fillers(1, 2);
            asm.label(skip);
            asm.filler();
            asm.jmp(back);
          });
          oc = 2 + 1 + 2 + 1 + 1;
          cost += oc + 1 + int3Len;
        } else {
          const skip = asm.fresh('skip');
          info.target = skip;
          asm.label(info.label);
          asm.site(id, 2, skip, () => info.initial === 1);
          asm.filler();
          const in2 = asm.fresh('in2');
          asm.jcc(Kind.jccIf, in2);
          asm.fillers(1, 2);
          asm.label(in2);
          asm.filler();
          asm.label(skip);
          cost += 1 + 1 + 1 + 2 + 1 + int3Len;
        }
        continue;
      }
      switch (choice) {
        case 0:
        case 1: {
          const n = rng.int(1, 3);
          for (let k = 0; k < n; k++) asm.filler();
          cost += n;
          break;
        }
        case 2: {
          const end = asm.fresh('endif');
          asm.filler();
          asm.jcc(Kind.jccIf, end);
          const n = rng.int(1, 4);
          for (let k = 0; k < n; k++) asm.filler();
          asm.label(end);
          cost += 2 + n;
          break;
        }
        case 3: {
          const top = asm.fresh('loop');
          asm.label(top);
          const n = rng.int(1, 3);
          for (let k = 0; k < n; k++) asm.filler();
          // A forward if inside the loop body makes TNT patterns less regular.
          const inner = asm.fresh('lif');
          asm.jcc(Kind.jccIf, inner);
          asm.filler();
          asm.label(inner);
          asm.filler();
          asm.jcc(Kind.jccLoop, top);
          cost += (n + 4) * (loopCap + 1);
          break;
        }
        case 4: {
          if (!callees || calls >= 2) {
            asm.filler();
            cost += 1;
            break;
          }
          calls++;
          const t = rng.pick(callees);
          asm.call(t);
          cost += 1 + (bound.get(t) ?? 0);
          break;
        }
        case 5: {
          if (!callees || calls >= 2) {
            asm.filler();
            cost += 1;
            break;
          }
          calls++;
          const ts = [...new Set([rng.pick(callees), rng.pick(callees), rng.pick(callees)])];
          asm.icall(ts);
          cost += 2 + Math.max(...ts.map((t) => bound.get(t) ?? 0));
          break;
        }
        default: {
          // switch: indirect jump to one of 2..3 cases, each jumping to the end
          const end = asm.fresh('swend');
          const cases = [asm.fresh('case'), asm.fresh('case'), ...(rng.chance(0.5) ? [asm.fresh('case')] : [])];
          asm.filler();
          asm.ijmp(cases);
          let worst = 0;
          cases.forEach((c, ci) => {
            asm.label(c);
            const n = rng.int(1, 3);
            for (let k = 0; k < n; k++) asm.filler();
            if (ci !== cases.length - 1) asm.jmp(end);
            worst = Math.max(worst, n + 1);
          });
          asm.label(end);
          cost += 3 + worst;
        }
      }
    }
    return cost;
  };

  const fnStart: string[] = [];
  const emitFunction = (fname: string, level: number): void => {
    asm.label(fname);
    fnStart.push(fname);
    asm.push(Register.RBP);
    asm.fixed(() => Instruction.createRegReg(Code.Mov_rm64_r64, Register.RBP, Register.RSP));
    const ool: (() => void)[] = [];
    const cost = statements(fname, level, ool);
    asm.pop(Register.RBP);
    asm.ret();
    for (const o of ool) o();
    asm.label(`${fname}.end`);
    bound.set(fname, cost + 5);
  };

  // Leaves first so callers know their callees' bounds.
  for (let level = names.length - 1; level >= 1; level--) for (const f of names[level]!) emitFunction(f, level);

  // The syscall entry: a few instructions, an indirect call into level 1, sysret.
  asm.label('entry_SYSCALL_64');
  asm.simple(Code.Swapgs);
  asm.fillers(2, 3);
  asm.icall([...names[1]!, 'bpf_trampoline_0']);
  if (opts.contextSwitch) {
    asm.jcc(Kind.jccSched, 'entry_SYSCALL_64.nosched');
    asm.call('__schedule');
    asm.label('entry_SYSCALL_64.nosched');
  }
  asm.fillers(1, 2);
  asm.simple(Code.Swapgs);
  asm.simple(Code.Sysretq, Kind.sysret);
  asm.label('entry_SYSCALL_64.end');
  const entryCost = 12 + Math.max(...names[1]!.map((t) => bound.get(t)!)) + (opts.contextSwitch ? 24 : 0);

  // The INT3 handler (the kernel's exc_int3 → poke_int3_handler, shortened).
  asm.label('asm_exc_int3');
  asm.push(Register.RAX);
  asm.filler();
  asm.filler();
  asm.filler();
  asm.pop(Register.RAX);
  asm.simple(Code.Iretq, Kind.iret);
  asm.label('asm_exc_int3.end');

  // The run-time trampoline: bytes written by a poke, called indirectly.
  asm.label('bpf_trampoline_0');
  asm.push(Register.RBP);
  asm.filler();
  {
    const skip = asm.fresh('tskip');
    asm.jcc(Kind.jccIf, skip);
    asm.filler();
    asm.label(skip);
  }
  asm.filler();
  asm.pop(Register.RBP);
  asm.ret();
  asm.label('bpf_trampoline_0.end');

  const schedNames = opts.contextSwitch ? contextSwitchPath(asm) : [];

  // Functions start aligned, like the kernel's.
  const starts = new Set([...names.flat(), 'asm_exc_int3', 'bpf_trampoline_0', ...schedNames]);
  const { labels, code, textSize, offs, lens, kinds, targets, siteIds, indirect } = asm.link(base, starts);
  const byOff = new Int32Array(textSize).fill(-1);
  offs.forEach((o, i) => {
    byOff[o] = i;
  });

  const sites: JumpSite[] = siteInfo
    .sort((a, b) => a.id - b.id)
    .map((s) => {
      const off = labels.get(s.label)!;
      const target = labels.get(s.target)!;
      const jmpBytes = enc(
        Instruction.createBranch(s.len === 5 ? Code.Jmp_rel32_64 : Code.Jmp_rel8_64, base + BigInt(target)),
        base + BigInt(off),
      );
      return {
        id: s.id,
        off,
        len: s.len,
        target,
        nopBytes: s.len === 5 ? NOP5.slice() : NOP2.slice(),
        jmpBytes,
        initial: s.initial,
        func: s.func,
      };
    });
  // The trampoline does not exist at the start: INT3 padding in the initial image.
  const tOff = labels.get('bpf_trampoline_0')!;
  const tEnd = labels.get('bpf_trampoline_0.end')!;
  const trampoline = { off: tOff, bytes: code.slice(tOff, tEnd), name: 'bpf_trampoline_0' };
  code.fill(0xcc, tOff, tEnd);
  const functions: SimFunction[] = [...names.flat(), 'asm_exc_int3', ...schedNames]
    .map((n) => {
      const level = names.findIndex((lv) => lv.includes(n));
      const off = labels.get(n)!;
      return { name: n, off, size: labels.get(`${n}.end`)! - off, level };
    })
    .sort((a, b) => a.off - b.off);

  return {
    base,
    code,
    off: Int32Array.from(offs),
    len: Uint8Array.from(lens),
    kind: Uint8Array.from(kinds),
    target: Int32Array.from(targets),
    site: Int16Array.from(siteIds),
    indirect,
    byOff,
    functions,
    sites,
    entry: labels.get('entry_SYSCALL_64')!,
    int3Handler: labels.get('asm_exc_int3')!,
    trampoline,
    maxBurstInsns: entryCost,
    loopCap,
    ...(opts.contextSwitch
      ? { sched: { ptss: labels.get('__perf_event_task_sched_out')!, back: labels.get('__schedule.back')! } }
      : {}),
  };
}

/** The context-switch path (at most 20 instructions), its function names. */
function contextSwitchPath(asm: Assembler): string[] {
  asm.label('__schedule');
  asm.push(Register.RBP);
  asm.fillers(1, 2);
  asm.call('__perf_event_task_sched_out');
  asm.filler();
  asm.call('__switch_to_asm');
  asm.label('__schedule.back');
  asm.filler();
  asm.pop(Register.RBP);
  asm.ret();
  asm.label('__schedule.end');
  // perf writes the switch-out record here
  asm.label('__perf_event_task_sched_out');
  asm.fillers(2, 3);
  asm.ret();
  asm.label('__perf_event_task_sched_out.end');
  // the kernel's __switch_to_asm switches stacks and tail-jumps to __switch_to
  asm.label('__switch_to_asm');
  asm.filler();
  asm.jmp('__switch_to');
  asm.label('__switch_to_asm.end');
  asm.label('__switch_to');
  asm.fillers(2, 4);
  asm.ret();
  asm.label('__switch_to.end');
  return ['__schedule', '__perf_event_task_sched_out', '__switch_to_asm', '__switch_to'];
}
