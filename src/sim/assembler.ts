/**
 * The simulator's assembler: x86-64 instructions encoded by iced-x86, collected
 * with symbolic labels, then laid out and encoded at the kernel text address.
 * Each op also carries what the executor needs to run it (kind, static target,
 * indirect targets), so the executor never decodes.
 */
import { Code, Encoder, Instruction, MemoryOperand, Register } from '../x86/iced.js';
import type { Rng } from './rng.js';

export type IcedInstruction = InstanceType<typeof Instruction>;

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
  jccSched: 11, // forward conditional branch over the call to __schedule: taken unless a switch is due
} as const;

/** The text `Assembler.link` lays out, and its per-instruction tables in address order. */
export interface Linked {
  labels: Map<string, number>;
  code: Uint8Array;
  textSize: number;
  offs: number[];
  lens: number[];
  kinds: number[];
  /** Static target offset, else -1. */
  targets: number[];
  /** Site id, else -1. */
  siteIds: number[];
  /** Candidate target offsets of indirect calls/jumps, by instruction index. */
  indirect: Map<number, number[]>;
}

export interface Op {
  len: number;
  kind: number;
  encode: (rip: bigint, labels: Map<string, number>, base: bigint) => Uint8Array;
  target?: string;
  site?: number;
  indirect?: string[];
  label?: string;
}

const encoder = new Encoder(64);
export function enc(ins: IcedInstruction, rip: bigint): Uint8Array {
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
export class Assembler {
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

  /**
   * Lays the ops out from offset 0 (a label in `starts` opens a function, aligned to 16 like the kernel's;
   * the gaps are INT3 padding, the text rounded up to whole pages) and encodes them at `base`.
   */
  link(base: bigint, starts: ReadonlySet<string>): Linked {
    const labels = new Map<string, number>();
    let pc = 0;
    const opOff: number[] = [];
    for (const op of this.ops) {
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
    this.ops.forEach((op, i) => {
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
    return { labels, code, textSize, offs, lens, kinds, targets, siteIds, indirect };
  }
}
