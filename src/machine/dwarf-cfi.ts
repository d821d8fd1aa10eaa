/**
 * DWARF call frame information (`.eh_frame` and `.debug_frame`) of an x86-64
 * ELF file: the CIEs and FDEs, and the unwind row of one address — where the
 * caller's CFA and registers are, the table libunwind builds from them
 * (DWARF 5 §6.4; the `.eh_frame` variant of the LSB: CIE id 0, `z`
 * augmentation data, DW_EH_PE pointer encodings).
 *
 * Addresses are the file's own (ELF virtual addresses); the unwinder maps a
 * process address to them (unwind-elf.ts).
 */

/** How to find a register of the caller (DWARF register numbers, x86-64: 16 = return address). */
export type RegRule =
  | { kind: 'same' }
  | { kind: 'undefined' }
  /** saved at CFA + off */
  | { kind: 'offset'; off: bigint }
  /** the value CFA + off */
  | { kind: 'valOffset'; off: bigint }
  /** in register `reg` of this frame */
  | { kind: 'register'; reg: number }
  /** saved at the address the expression gives (CFA pushed first) */
  | { kind: 'expression'; expr: Uint8Array }
  | { kind: 'valExpression'; expr: Uint8Array };

export type CfaRule = { kind: 'reg'; reg: number; off: bigint } | { kind: 'expression'; expr: Uint8Array };

export interface UnwindRow {
  cfa: CfaRule;
  regs: Map<number, RegRule>;
  /** The column holding the return address (CIE's return_address_register). */
  raReg: number;
  /** The CIE's `S` augmentation: a signal frame (pc is not a return address). */
  signal: boolean;
}

interface Cie {
  codeAlign: bigint;
  dataAlign: bigint;
  raReg: number;
  fdeEnc: number;
  signal: boolean;
  /** A `z` augmentation: FDEs carry an augmentation length to skip. */
  hasAug: boolean;
  instrStart: number;
  instrEnd: number;
}

export interface Fde {
  start: bigint;
  end: bigint;
  cie: Cie;
  instrStart: number;
  instrEnd: number;
}

/** Registers libunwind tracks on x86-64 (DWARF_NUM_PRESERVED_REGS): rax…r15 and the return address. */
export const NUM_REGS = 17;

export class CfiError extends Error {}

/** A little-endian cursor over a section, with DWARF's variable-length integers. */
class Cur {
  constructor(
    readonly buf: Uint8Array,
    readonly dv: DataView,
    public pos: number,
  ) {}
  u8(): number {
    if (this.pos >= this.buf.length) throw new CfiError('CFI past the end of the section');
    return this.buf[this.pos++]!;
  }
  u16(): number {
    const v = this.dv.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(): number {
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    const v = this.dv.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  uleb(): bigint {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      r |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return r;
    }
  }
  sleb(): bigint {
    let r = 0n;
    let shift = 0n;
    let b: number;
    do {
      b = this.u8();
      r |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    if (b & 0x40) r -= 1n << shift;
    return r;
  }
  cstr(): string {
    let s = '';
    for (let c = this.u8(); c !== 0; c = this.u8()) s += String.fromCharCode(c);
    return s;
  }
}

const DW_EH_PE_omit = 0xff;

/**
 * A DW_EH_PE-encoded pointer. `pcrel` is relative to the pointer's own
 * address: the section's address + its offset in the section.
 */
function readEncoded(c: Cur, enc: number, secAddr: bigint, secStart: number): bigint {
  if (enc === DW_EH_PE_omit) return 0n;
  const here = secAddr + BigInt(c.pos - secStart);
  let v: bigint;
  switch (enc & 0x0f) {
    case 0x00:
      v = c.u64();
      break;
    case 0x01:
      v = c.uleb();
      break;
    case 0x02:
      v = BigInt(c.u16());
      break;
    case 0x03:
      v = BigInt(c.u32());
      break;
    case 0x04:
      v = c.u64();
      break;
    case 0x09:
      v = c.sleb();
      break;
    case 0x0a:
      v = BigInt((c.u16() << 16) >> 16);
      break;
    case 0x0b:
      v = BigInt(c.u32() | 0);
      break;
    case 0x0c:
      v = BigInt.asIntN(64, c.u64());
      break;
    default:
      throw new CfiError(`unknown pointer encoding 0x${enc.toString(16)}`);
  }
  switch (enc & 0x70) {
    case 0x00:
      break;
    case 0x10: // DW_EH_PE_pcrel
      v += here;
      break;
    default:
      // textrel/datarel/funcrel/aligned: not used by x86-64 toolchains for FDE addresses
      throw new CfiError(`unsupported pointer application 0x${(enc & 0x70).toString(16)}`);
  }
  return BigInt.asUintN(64, v);
}

/** The FDEs of one `.eh_frame` (eh = true) or `.debug_frame` section, sorted by start. */
export function parseCfi(buf: Uint8Array, secStart: number, secSize: number, secAddr: bigint, eh: boolean): Fde[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const end = Math.min(buf.length, secStart + secSize);
  const cies = new Map<number, Cie | null>();
  const fdes: Fde[] = [];
  let pos = secStart;
  while (pos + 4 <= end) {
    const c = new Cur(buf, dv, pos);
    let len = BigInt(c.u32());
    if (len === 0n && eh) break; // .eh_frame's terminator
    let idSize = 4;
    if (len === 0xffffffffn) {
      len = c.u64();
      idSize = 8;
    }
    const bodyStart = c.pos;
    const next = bodyStart + Number(len);
    if (next > end) break;
    const idPos = c.pos;
    const id = idSize === 4 ? BigInt(c.u32()) : c.u64();
    const isCie = eh ? id === 0n : id === (idSize === 4 ? 0xffffffffn : 0xffffffffffffffffn);
    if (!isCie) {
      const ciePos = eh ? idPos - Number(id) : secStart + Number(id);
      let cie = cies.get(ciePos);
      if (cie === undefined) {
        cie = parseCie(buf, dv, ciePos, end, secAddr, secStart, eh);
        cies.set(ciePos, cie);
      }
      if (cie) {
        try {
          const start = readEncoded(c, eh ? cie.fdeEnc : 0x00, secAddr, secStart);
          const range = readEncoded(c, eh ? cie.fdeEnc & 0x0f : 0x00, secAddr, secStart);
          if (eh && cie.hasAug) c.pos += Number(c.uleb());
          if (range > 0n) fdes.push({ start, end: start + range, cie, instrStart: c.pos, instrEnd: next });
        } catch (e) {
          if (!(e instanceof CfiError)) throw e;
        }
      }
    }
    pos = next;
  }
  fdes.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return fdes;
}

function parseCie(
  buf: Uint8Array,
  dv: DataView,
  pos: number,
  end: number,
  secAddr: bigint,
  secStart: number,
  eh: boolean,
): Cie | null {
  try {
    const c = new Cur(buf, dv, pos);
    let len = BigInt(c.u32());
    let idSize = 4;
    if (len === 0xffffffffn) {
      len = c.u64();
      idSize = 8;
    }
    const next = c.pos + Number(len);
    if (next > end) return null;
    c.pos += idSize;
    const version = c.u8();
    const aug = c.cstr();
    if (!eh && version >= 4) c.pos += 2; // address_size, segment_selector_size
    const codeAlign = c.uleb();
    const dataAlign = c.sleb();
    const raReg = version === 1 ? c.u8() : Number(c.uleb());
    let fdeEnc = 0x00;
    let signal = false;
    const hasAug = aug.startsWith('z');
    if (hasAug) {
      const augLen = Number(c.uleb());
      const augEnd = c.pos + augLen;
      for (const ch of aug.slice(1)) {
        if (ch === 'R') fdeEnc = c.u8();
        else if (ch === 'L') c.u8();
        else if (ch === 'P') readEncoded(c, c.u8() & 0x7f, secAddr, secStart);
        else if (ch === 'S') signal = true;
        else break; // unknown letter: the length lets us skip the rest
      }
      c.pos = augEnd;
    } else if (aug !== '') {
      return null; // an augmentation we cannot skip
    }
    return { codeAlign, dataAlign, raReg, fdeEnc, signal, hasAug, instrStart: c.pos, instrEnd: next };
  } catch (e) {
    if (e instanceof CfiError || e instanceof RangeError) return null;
    throw e;
  }
}

/** The FDE covering pc (start <= pc < end), by binary search. */
export function findFde(fdes: readonly Fde[], pc: bigint): Fde | undefined {
  let lo = 0;
  let hi = fdes.length - 1;
  let best: Fde | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const f = fdes[mid]!;
    if (f.start <= pc) {
      best = f;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best && pc < best.end ? best : undefined;
}

interface State {
  cfa: CfaRule;
  regs: Map<number, RegRule>;
}

/**
 * The row for pc: the CIE's initial instructions, then the FDE's up to the
 * last location <= pc (remember/restore state included).
 */
export function unwindRow(buf: Uint8Array, fde: Fde, pc: bigint, secAddr: bigint, secStart: number): UnwindRow {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const cie = fde.cie;
  const st: State = { cfa: { kind: 'reg', reg: 7, off: 8n }, regs: new Map() };
  run(new Cur(buf, dv, cie.instrStart), cie.instrEnd, -1n, st, undefined, cie, secAddr, secStart);
  const initial = new Map(st.regs);
  run(new Cur(buf, dv, fde.instrStart), fde.instrEnd, pc, st, initial, cie, secAddr, secStart, fde.start);
  return { cfa: st.cfa, regs: st.regs, raReg: cie.raReg, signal: cie.signal };
}

/** Execute CFA instructions; `target` < 0: all of them (a CIE's initial instructions). */
function run(
  c: Cur,
  end: number,
  target: bigint,
  st: State,
  initial: Map<number, RegRule> | undefined,
  cie: Cie,
  secAddr: bigint,
  secStart: number,
  loc0 = 0n,
): void {
  let loc = loc0;
  const stack: State[] = [];
  const block = (): Uint8Array => {
    const n = Number(c.uleb());
    const b = c.buf.subarray(c.pos, c.pos + n);
    c.pos += n;
    return b;
  };
  const advance = (delta: bigint): boolean => {
    loc += delta * cie.codeAlign;
    return target >= 0n && loc > target;
  };
  // a new register or offset after a CFA expression is undefined in DWARF: start from rsp+0
  const cfaReg = (): { reg: number; off: bigint } => (st.cfa.kind === 'reg' ? st.cfa : { reg: 7, off: 0n });
  while (c.pos < end) {
    const op = c.u8();
    const hi = op & 0xc0;
    const low = op & 0x3f;
    if (hi === 0x40) {
      if (advance(BigInt(low))) return;
      continue;
    }
    if (hi === 0x80) {
      st.regs.set(low, { kind: 'offset', off: c.uleb() * cie.dataAlign });
      continue;
    }
    if (hi === 0xc0) {
      restore(st, initial, low);
      continue;
    }
    switch (op) {
      case 0x00: // nop
        break;
      case 0x01: // set_loc
        loc = readEncoded(c, cie.fdeEnc, secAddr, secStart);
        if (target >= 0n && loc > target) return;
        break;
      case 0x02:
        if (advance(BigInt(c.u8()))) return;
        break;
      case 0x03:
        if (advance(BigInt(c.u16()))) return;
        break;
      case 0x04:
        if (advance(BigInt(c.u32()))) return;
        break;
      case 0x05: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'offset', off: c.uleb() * cie.dataAlign });
        break;
      }
      case 0x06:
        restore(st, initial, Number(c.uleb()));
        break;
      case 0x07:
        st.regs.set(Number(c.uleb()), { kind: 'undefined' });
        break;
      case 0x08:
        st.regs.set(Number(c.uleb()), { kind: 'same' });
        break;
      case 0x09: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'register', reg: Number(c.uleb()) });
        break;
      }
      case 0x0a:
        stack.push({ cfa: st.cfa, regs: new Map(st.regs) });
        break;
      case 0x0b: {
        const s = stack.pop();
        if (!s) throw new CfiError('DW_CFA_restore_state without a remembered state');
        // libunwind and libdw restore the registers and the CFA rule together
        st.regs = s.regs;
        st.cfa = s.cfa;
        break;
      }
      case 0x0c: {
        const reg = Number(c.uleb());
        st.cfa = { kind: 'reg', reg, off: c.uleb() };
        break;
      }
      case 0x0d:
        st.cfa = { kind: 'reg', reg: Number(c.uleb()), off: cfaReg().off };
        break;
      case 0x0e:
        st.cfa = { kind: 'reg', reg: cfaReg().reg, off: c.uleb() };
        break;
      case 0x0f:
        st.cfa = { kind: 'expression', expr: block() };
        break;
      case 0x10: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'expression', expr: block() });
        break;
      }
      case 0x11: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'offset', off: c.sleb() * cie.dataAlign });
        break;
      }
      case 0x12: {
        const reg = Number(c.uleb());
        st.cfa = { kind: 'reg', reg, off: c.sleb() * cie.dataAlign };
        break;
      }
      case 0x13:
        st.cfa = { kind: 'reg', reg: cfaReg().reg, off: c.sleb() * cie.dataAlign };
        break;
      case 0x14: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'valOffset', off: c.uleb() * cie.dataAlign });
        break;
      }
      case 0x15: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'valOffset', off: c.sleb() * cie.dataAlign });
        break;
      }
      case 0x16: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'valExpression', expr: block() });
        break;
      }
      case 0x2e: // GNU_args_size
        c.uleb();
        break;
      case 0x2f: {
        const r = Number(c.uleb());
        st.regs.set(r, { kind: 'offset', off: -(c.uleb() * cie.dataAlign) });
        break;
      }
      default:
        throw new CfiError(`unknown CFA instruction 0x${op.toString(16)}`);
    }
  }
}

function restore(st: State, initial: Map<number, RegRule> | undefined, reg: number): void {
  const r = initial?.get(reg);
  if (r) st.regs.set(reg, r);
  else st.regs.delete(reg);
}
