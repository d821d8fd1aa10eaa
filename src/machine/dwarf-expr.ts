/**
 * The DWARF expression stack machine, for the CFI rules that use one
 * (DW_CFA_def_cfa_expression, DW_CFA_expression, DW_CFA_val_expression):
 * glibc's and binutils' PLT stubs compute their CFA as
 * `rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)`, signal trampolines locate saved
 * registers in the sigcontext. Operations on registers, constants,
 * arithmetic, comparisons, branches and memory reads (DWARF 5 §2.5.1).
 */

export interface ExprContext {
  /** A register of the frame (DWARF numbering); undefined: not known. */
  reg(n: number): bigint | undefined;
  /** 8 bytes of the process's memory; undefined: unreadable. */
  read(addr: bigint): bigint | undefined;
}

export class ExprError extends Error {}

const u64 = (v: bigint): bigint => BigInt.asUintN(64, v);
const s64 = (v: bigint): bigint => BigInt.asIntN(64, v);

/** Evaluate `expr` with `initial` pushed first; the value on top of the stack at the end. */
export function evalExpr(expr: Uint8Array, ctx: ExprContext, initial: bigint[] = []): bigint {
  const dv = new DataView(expr.buffer, expr.byteOffset, expr.byteLength);
  const st: bigint[] = [...initial];
  let pc = 0;
  const uleb = (): bigint => {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      if (pc >= expr.length) throw new ExprError('expression ends inside an operand');
      const b = expr[pc++]!;
      r |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return r;
    }
  };
  const sleb = (): bigint => {
    let r = 0n;
    let shift = 0n;
    let b = 0;
    do {
      if (pc >= expr.length) throw new ExprError('expression ends inside an operand');
      b = expr[pc++]!;
      r |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    return b & 0x40 ? r - (1n << shift) : r;
  };
  const pop = (): bigint => {
    const v = st.pop();
    if (v === undefined) throw new ExprError('expression stack underflow');
    return v;
  };
  const reg = (n: number): bigint => {
    const v = ctx.reg(n);
    if (v === undefined) throw new ExprError(`register ${n} unknown`);
    return v;
  };
  const bin = (f: (a: bigint, b: bigint) => bigint): void => {
    const b = pop();
    const a = pop();
    st.push(u64(f(a, b)));
  };
  const fixed = (n: number, signed: boolean): bigint => {
    let v: bigint;
    if (n === 1) v = BigInt(signed ? dv.getInt8(pc) : dv.getUint8(pc));
    else if (n === 2) v = BigInt(signed ? dv.getInt16(pc, true) : dv.getUint16(pc, true));
    else if (n === 4) v = BigInt(signed ? dv.getInt32(pc, true) : dv.getUint32(pc, true));
    else v = signed ? dv.getBigInt64(pc, true) : dv.getBigUint64(pc, true);
    pc += n;
    return u64(v);
  };
  while (pc < expr.length) {
    const op = expr[pc++]!;
    if (op >= 0x30 && op <= 0x4f)
      st.push(BigInt(op - 0x30)); // lit0..lit31
    else if (op >= 0x50 && op <= 0x6f)
      st.push(reg(op - 0x50)); // reg0..reg31 (as a value)
    else if (op >= 0x70 && op <= 0x8f)
      st.push(u64(reg(op - 0x70) + sleb())); // breg0..breg31
    else
      switch (op) {
        case 0x03: // addr
          st.push(fixed(8, false));
          break;
        case 0x06: {
          const v = ctx.read(pop());
          if (v === undefined) throw new ExprError('memory not readable');
          st.push(v);
          break;
        }
        case 0x08:
          st.push(fixed(1, false));
          break;
        case 0x09:
          st.push(fixed(1, true));
          break;
        case 0x0a:
          st.push(fixed(2, false));
          break;
        case 0x0b:
          st.push(fixed(2, true));
          break;
        case 0x0c:
          st.push(fixed(4, false));
          break;
        case 0x0d:
          st.push(fixed(4, true));
          break;
        case 0x0e:
          st.push(fixed(8, false));
          break;
        case 0x0f:
          st.push(fixed(8, true));
          break;
        case 0x10:
          st.push(uleb());
          break;
        case 0x11:
          st.push(u64(sleb()));
          break;
        case 0x12: // dup
          st.push(st[st.length - 1] ?? pop());
          break;
        case 0x13:
          pop();
          break;
        case 0x14: {
          const v = st[st.length - 2];
          if (v === undefined) throw new ExprError('expression stack underflow');
          st.push(v);
          break;
        }
        case 0x15: {
          const i = Number(fixed(1, false));
          const v = st[st.length - 1 - i];
          if (v === undefined) throw new ExprError('expression stack underflow');
          st.push(v);
          break;
        }
        case 0x16: {
          const b = pop();
          const a = pop();
          st.push(b, a);
          break;
        }
        case 0x17: {
          const c = pop();
          const b = pop();
          const a = pop();
          st.push(c, a, b);
          break;
        }
        case 0x19: {
          const v = s64(pop());
          st.push(u64(v < 0n ? -v : v));
          break;
        }
        case 0x1a:
          bin((a, b) => a & b);
          break;
        case 0x1b:
          bin((a, b) => (b === 0n ? 0n : s64(a) / s64(b)));
          break;
        case 0x1c:
          bin((a, b) => a - b);
          break;
        case 0x1d:
          bin((a, b) => (b === 0n ? 0n : a % b));
          break;
        case 0x1e:
          bin((a, b) => a * b);
          break;
        case 0x1f:
          st.push(u64(-pop()));
          break;
        case 0x20:
          st.push(u64(~pop()));
          break;
        case 0x21:
          bin((a, b) => a | b);
          break;
        case 0x22:
          bin((a, b) => a + b);
          break;
        case 0x23:
          st.push(u64(pop() + uleb()));
          break;
        case 0x24:
          bin((a, b) => (b >= 64n ? 0n : a << b));
          break;
        case 0x25:
          bin((a, b) => (b >= 64n ? 0n : a >> b));
          break;
        case 0x26:
          bin((a, b) => s64(a) >> (b >= 64n ? 63n : b));
          break;
        case 0x27:
          bin((a, b) => a ^ b);
          break;
        case 0x28: {
          const off = Number(BigInt.asIntN(16, fixed(2, true)));
          if (pop() !== 0n) pc += off;
          break;
        }
        case 0x29:
          bin((a, b) => (s64(a) === s64(b) ? 1n : 0n));
          break;
        case 0x2a:
          bin((a, b) => (s64(a) >= s64(b) ? 1n : 0n));
          break;
        case 0x2b:
          bin((a, b) => (s64(a) > s64(b) ? 1n : 0n));
          break;
        case 0x2c:
          bin((a, b) => (s64(a) <= s64(b) ? 1n : 0n));
          break;
        case 0x2d:
          bin((a, b) => (s64(a) < s64(b) ? 1n : 0n));
          break;
        case 0x2e:
          bin((a, b) => (s64(a) !== s64(b) ? 1n : 0n));
          break;
        case 0x2f:
          pc += Number(BigInt.asIntN(16, fixed(2, true)));
          break;
        case 0x90: // regx
          st.push(reg(Number(uleb())));
          break;
        case 0x92: {
          const r = Number(uleb());
          st.push(u64(reg(r) + sleb()));
          break;
        }
        case 0x96: // nop
          break;
        default:
          throw new ExprError(`DWARF operation 0x${op.toString(16)} not supported`);
      }
  }
  const top = st.pop();
  if (top === undefined) throw new ExprError('empty expression');
  return top;
}
