import { Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic } from './iced.js';

/**
 * What a PT flow decoder needs to know about one instruction (perf's
 * INTEL_PT_OP_* + INTEL_PT_BR_*, libipt's ptic_*), reduced from iced-x86's
 * 64-bit decode.
 *
 * - jcc: conditional near branch (incl. loop*, jrcxz) — consumes a TNT bit
 * - jmp/call: near, direct (target) or indirect (TIP)
 * - ret: near return (TNT bit under return compression, else TIP)
 * - far: far jmp/call/ret, vmlaunch/vmresume — a TIP gives the target
 * - syscall (syscall, sysenter), sysret (sysret, sysexit), iret, int3, int (int n, int1, into)
 * - other: everything that does not change the flow (xbegin, ud2 included)
 */
export type InsnOp = 'jcc' | 'jmp' | 'call' | 'ret' | 'far' | 'syscall' | 'sysret' | 'iret' | 'int3' | 'int' | 'other';

export interface InsnClass {
  length: number;
  op: InsnOp;
  /** The target comes from the trace (TIP), not from the instruction bytes. */
  indirect: boolean;
  /** Direct near branch target (jcc, direct jmp/call). */
  target?: bigint;
  /** The instruction ends a basic block (every op but 'other'). */
  endsBlock: boolean;
}

/** Classifies the decoded instruction in `ins` (shared by classifyInsn and the block cache). */
export function classifyDecoded(ins: Instruction): InsnClass | null {
  const fc = ins.flowControl;
  if (fc === FlowControl.Next) return { length: ins.length, op: 'other', indirect: false, endsBlock: false };
  if (ins.isInvalid) return null;
  const length = ins.length;
  const m = ins.mnemonic;
  switch (fc) {
    case FlowControl.ConditionalBranch:
      return { length, op: 'jcc', indirect: false, target: ins.nearBranchTarget, endsBlock: true };
    case FlowControl.UnconditionalBranch:
      if (ins.isJmpFar) return { length, op: 'far', indirect: true, endsBlock: true };
      return { length, op: 'jmp', indirect: false, target: ins.nearBranchTarget, endsBlock: true };
    case FlowControl.IndirectBranch:
      return { length, op: ins.isJmpFarIndirect ? 'far' : 'jmp', indirect: true, endsBlock: true };
    case FlowControl.Call:
      if (m === Mnemonic.Syscall || m === Mnemonic.Sysenter)
        return { length, op: 'syscall', indirect: true, endsBlock: true };
      if (m !== Mnemonic.Call || ins.isCallFar) return { length, op: 'far', indirect: true, endsBlock: true };
      return { length, op: 'call', indirect: false, target: ins.nearBranchTarget, endsBlock: true };
    case FlowControl.IndirectCall:
      return { length, op: ins.isCallFarIndirect ? 'far' : 'call', indirect: true, endsBlock: true };
    case FlowControl.Return:
      switch (m) {
        case Mnemonic.Ret:
          return { length, op: 'ret', indirect: true, endsBlock: true };
        case Mnemonic.Retf:
          return { length, op: 'far', indirect: true, endsBlock: true };
        case Mnemonic.Sysret:
        case Mnemonic.Sysretq:
        case Mnemonic.Sysexit:
        case Mnemonic.Sysexitq:
          return { length, op: 'sysret', indirect: true, endsBlock: true };
        default:
          return { length, op: 'iret', indirect: true, endsBlock: true };
      }
    case FlowControl.Interrupt:
      return { length, op: m === Mnemonic.Int3 ? 'int3' : 'int', indirect: true, endsBlock: true };
    default:
      return { length, op: 'other', indirect: false, endsBlock: false };
  }
}

/**
 * Everything but the length and the target depends only on the
 * instruction's Code (its opcode form), so the class is computed once per
 * Code and looked up after that: a block walk then costs three wasm calls per
 * instruction (decodeOut, code, length) plus one per direct branch (target).
 */
export interface CodeClass {
  op: InsnOp;
  indirect: boolean;
  endsBlock: boolean;
  direct: boolean;
}
const byCode: (CodeClass | null | undefined)[] = [];

/** The per-Code class of the decoded instruction (null: invalid), without its length/target. */
export function codeClass(ins: Instruction): CodeClass | null {
  const code = ins.code;
  if (code === 0) return null; // Code.INVALID
  let t = byCode[code];
  if (t === undefined) {
    const c = classifyDecoded(ins);
    t = byCode[code] = c
      ? { op: c.op, indirect: c.indirect, endsBlock: c.endsBlock, direct: c.target !== undefined }
      : null;
  }
  return t;
}

export function classifyFast(ins: Instruction): InsnClass | null {
  const t = codeClass(ins);
  if (!t) return null;
  const length = ins.length;
  if (t.direct) return { length, op: t.op, indirect: false, target: ins.nearBranchTarget, endsBlock: true };
  return { length, op: t.op, indirect: t.indirect, endsBlock: t.endsBlock };
}

let sharedIns: Instruction | undefined;

/**
 * Classifies the instruction at the start of `bytes`, located at `ip`.
 * Returns null when the bytes are not a valid 64-bit instruction or are cut
 * short. (One wasm Decoder is created and freed per call; walk code with
 * BlockCache for speed.)
 */
export function classifyInsn(bytes: Uint8Array, ip: bigint): InsnClass | null {
  const d = new Decoder(64, bytes, DecoderOptions.None);
  try {
    d.ip = ip;
    if (!d.canDecode) return null;
    sharedIns ??= new Instruction();
    const ins = sharedIns;
    d.decodeOut(ins);
    return classifyDecoded(ins);
  } finally {
    d.free();
  }
}
