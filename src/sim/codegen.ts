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
import iced from 'iced-x86';
import { Rng } from './rng.js';

const { Code, Encoder, Instruction, MemoryOperand, Register } = iced;
type IcedInstruction = InstanceType<typeof Instruction>;

export const KERNEL_TEXT_BASE = 0xffffffff81000000n;

/** What the executor does at an instruction. */
export const Kind = {
  other: 0,
  jccIf: 1, // forward conditional branch, random outcome
  jccLoop: 2, // backward conditional branch closing a loop
  jmp: 3,
  call: 4,
  ret: 5,
  icall: 6,
  ijmp: 7,
  site: 8, // jump-label site (NOP or JMP by time)
  sysret: 9, // leaves the kernel: end of a trace burst
  iret: 10, // returns from the INT3 handler
} as const;

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
}

export interface CodegenOptions {
  seed: number;
  /** Jump-label sites to create (half 5-byte, half 2-byte). */
  sites?: number;
  /** Functions per call level below the entry. */
  levels?: number[];
}

interface Op {
  len: number;
  kind: number;
  encode: (rip: bigint, labels: Map<string, number>, base: bigint) => Uint8Array;
  target?: string;
  site?: number;
  indirect?: string[];
  label?: string;
}

const encoder = new Encoder(64);
function enc(ins: IcedInstruction, rip: bigint): Uint8Array {
  encoder.encode(ins, rip);
  ins.free();
  return encoder.takeBuffer();
}

const GPR = [
  Register.RBX,
  Register.RCX,
  Register.RDX,
  Register.RSI,
  Register.RDI,
  Register.R8,
  Register.R9,
  Register.R10,
  Register.R11,
  Register.R12,
];
const JCC = [
  Code.Je_rel32_64,
  Code.Jne_rel32_64,
  Code.Jl_rel32_64,
  Code.Jge_rel32_64,
  Code.Jb_rel32_64,
  Code.Jae_rel32_64,
  Code.Ja_rel32_64,
  Code.Jbe_rel32_64,
  Code.Js_rel32_64,
  Code.Jns_rel32_64,
];

export const NOP5 = Uint8Array.of(0x0f, 0x1f, 0x44, 0x00, 0x00);
export const NOP2 = Uint8Array.of(0x66, 0x90);

/** Collects ops with symbolic labels; `link` lays them out and encodes them. */
class Assembler {
  ops: Op[] = [];
  private n = 0;
  constructor(private rng: Rng) {}

  fresh(prefix: string): string {
    return `${prefix}.${this.n++}`;
  }
  label(name: string): void {
    this.ops.push({ len: 0, kind: -1, encode: () => new Uint8Array(0), label: name });
  }
  fixed(make: () => IcedInstruction): void {
    const len = enc(make(), 0n).length;
    this.ops.push({ len, kind: Kind.other, encode: (rip) => enc(make(), rip) });
  }
  /** One random non-branch instruction. */
  filler(): void {
    const r = this.rng;
    const a = r.pick(GPR);
    const b = r.pick(GPR);
    const d = BigInt(r.int(0, 15) * 8);
    switch (r.int(0, 8)) {
      case 0:
        this.fixed(() => Instruction.createRegReg(Code.Mov_rm64_r64, a, b));
        return;
      case 1: {
        const v = r.int(1, 100);
        this.fixed(() => Instruction.createRegI32(Code.Add_rm64_imm8, a, v));
        return;
      }
      case 2:
        this.fixed(() => Instruction.createRegReg(Code.Xor_rm64_r64, a, b));
        return;
      case 3:
        this.fixed(() =>
          Instruction.createRegMem(
            Code.Lea_r64_m,
            a,
            new MemoryOperand(b, Register.None, 1, d, 1, false, Register.None),
          ),
        );
        return;
      case 4:
        this.fixed(() =>
          Instruction.createRegMem(
            Code.Mov_r64_rm64,
            a,
            new MemoryOperand(b, Register.None, 1, d, 1, false, Register.None),
          ),
        );
        return;
      case 5:
        this.fixed(() =>
          Instruction.createMemReg(
            Code.Mov_rm64_r64,
            new MemoryOperand(b, Register.None, 1, d, 1, false, Register.None),
            a,
          ),
        );
        return;
      case 6: {
        const v = r.int(0, 50);
        this.fixed(() => Instruction.createRegI32(Code.Cmp_rm64_imm8, a, v));
        return;
      }
      case 7:
        this.fixed(() => Instruction.createRegReg(Code.Test_rm64_r64, a, b));
        return;
      default: {
        const v = r.int(1, 9);
        this.fixed(() => Instruction.createRegI32(Code.Sub_rm64_imm8, a, v));
        return;
      }
    }
  }
  fillers(lo: number, hi: number): void {
    const n = this.rng.int(lo, hi);
    for (let i = 0; i < n; i++) this.filler();
  }
  simple(code: number, kind: number = Kind.other): void {
    const len = enc(Instruction.create(code), 0n).length;
    this.ops.push({ len, kind, encode: (rip) => enc(Instruction.create(code), rip) });
  }
  push(reg: number): void {
    this.fixed(() => Instruction.createReg(Code.Push_r64, reg));
  }
  pop(reg: number): void {
    this.fixed(() => Instruction.createReg(Code.Pop_r64, reg));
  }
  branch(code: number, kind: number, target: string, len: number): void {
    this.ops.push({
      len,
      kind,
      target,
      encode: (rip, labels, base) => enc(Instruction.createBranch(code, base + BigInt(labels.get(target)!)), rip),
    });
  }
  jcc(kind: number, target: string): void {
    this.branch(this.rng.pick(JCC), kind, target, 6);
  }
  jmp(target: string): void {
    this.branch(Code.Jmp_rel32_64, Kind.jmp, target, 5);
  }
  call(target: string): void {
    this.branch(Code.Call_rel32_64, Kind.call, target, 5);
  }
  /** `mov rax, [rdi+8]; call rax` — the target comes from data, so PT needs a TIP. */
  icall(targets: string[]): void {
    this.fixed(() =>
      Instruction.createRegMem(
        Code.Mov_r64_rm64,
        Register.RAX,
        new MemoryOperand(Register.RDI, Register.None, 1, 8n, 1, false, Register.None),
      ),
    );
    this.ops.push({
      len: 2,
      kind: Kind.icall,
      indirect: targets,
      encode: (rip) => enc(Instruction.createReg(Code.Call_rm64, Register.RAX), rip),
    });
  }
  ijmp(targets: string[]): void {
    this.fixed(() =>
      Instruction.createRegMem(
        Code.Mov_r64_rm64,
        Register.RAX,
        new MemoryOperand(Register.RSI, Register.None, 1, 16n, 1, false, Register.None),
      ),
    );
    this.ops.push({
      len: 2,
      kind: Kind.ijmp,
      indirect: targets,
      encode: (rip) => enc(Instruction.createReg(Code.Jmp_rm64, Register.RAX), rip),
    });
  }
  ret(): void {
    this.simple(Code.Retnq, Kind.ret);
  }
  /** A jump-label site; `jmpForm` chooses which bytes the initial image holds. */
  site(id: number, len: 2 | 5, target: string, jmpForm: () => boolean): void {
    this.ops.push({
      len,
      kind: Kind.site,
      site: id,
      target,
      encode: (rip, labels, base) => {
        if (!jmpForm()) return len === 5 ? NOP5.slice() : NOP2.slice();
        return enc(
          Instruction.createBranch(
            len === 5 ? Code.Jmp_rel32_64 : Code.Jmp_rel8_64,
            base + BigInt(labels.get(target)!),
          ),
          rip,
        );
      },
    });
  }
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
  asm.fillers(1, 2);
  asm.simple(Code.Swapgs);
  asm.simple(Code.Sysretq, Kind.sysret);
  asm.label('entry_SYSCALL_64.end');
  const entryCost = 12 + Math.max(...names[1]!.map((t) => bound.get(t)!));

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

  // Layout: functions aligned to 16 like the kernel's, filled with INT3 padding.
  const labels = new Map<string, number>();
  const starts = new Set([...names.flat(), 'asm_exc_int3', 'bpf_trampoline_0']);
  let pc = 0;
  const opOff: number[] = [];
  for (const op of asm.ops) {
    if (op.label) {
      if (starts.has(op.label)) pc = (pc + 15) & ~15;
      labels.set(op.label, pc);
    }
    opOff.push(pc);
    pc += op.len;
  }
  const textSize = (pc + 0xfff) & ~0xfff;
  const code = new Uint8Array(textSize).fill(0xcc);
  const offs: number[] = [];
  const lens: number[] = [];
  const kinds: number[] = [];
  const targets: number[] = [];
  const siteIds: number[] = [];
  const indirect = new Map<number, number[]>();
  asm.ops.forEach((op, i) => {
    if (op.label !== undefined) return;
    const o = opOff[i]!;
    const bytes = op.encode(base + BigInt(o), labels, base);
    if (bytes.length !== op.len)
      throw new Error(`codegen: op length ${bytes.length} ≠ planned ${op.len} at +0x${o.toString(16)}`);
    code.set(bytes, o);
    if (op.indirect)
      indirect.set(
        offs.length,
        op.indirect.map((l) => labels.get(l)!),
      );
    offs.push(o);
    lens.push(op.len);
    kinds.push(op.kind);
    targets.push(op.target !== undefined ? labels.get(op.target)! : -1);
    siteIds.push(op.site ?? -1);
  });
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
  const functions: SimFunction[] = [...names.flat(), 'asm_exc_int3']
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
  };
}
