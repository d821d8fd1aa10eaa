/**
 * Post-unwinding of a `perf record --call-graph dwarf` sample: the user
 * registers (PERF_SAMPLE_REGS_USER) and the copy of the user stack
 * (PERF_SAMPLE_STACK_USER) walked with the CFI of the mapped files, giving
 * the frames perf 6.1 gives. perf 6.1 as packaged here unwinds with
 * libunwind (util/unwind-libunwind-local.c), so this follows libunwind's
 * x86-64 stepping (dwarf_step, then unw_step's fallbacks when no FDE covers
 * the address: a PLT stub, else the frame-pointer chain) and perf's
 * get_entries: the sampled IP first, then each caller's return address less
 * one (the call instruction, as dwfl_frame_pc does), at most max_stack.
 *
 * Memory is perf's access_mem: the stack copy for [sp, sp + size - 8), else
 * the bytes of the file mapped at that address, else 0 (perf reports success
 * with a zero word: a return address read past the stack copy gives a last
 * frame of 0 - 1, which perf prints as `ffffffffffffffff [unknown]`).
 */
import { NUM_REGS, type RegRule } from './dwarf-cfi.js';
import { evalExpr, ExprError } from './dwarf-expr.js';
import type { ElfUnwind } from './unwind-elf.js';

/** Where a process address is mapped: the file's unwind tables and the address's offset in it. */
export interface UnwindMap {
  start: bigint;
  /** ip - start + pgoff */
  mapIp: bigint;
  /** Where perf's .eh_frame search believes the file is loaded (UserMaps.loadBase); absent: start - pgoff. */
  loadBase?: bigint;
  /** The file's tables; undefined when perf cannot open it (anonymous memory, missing file). */
  tables: ElfUnwind | undefined;
}

export interface UnwindSample {
  /** sample_regs_user */
  mask: bigint;
  /** The sampled user registers, in mask bit order. */
  regs: readonly bigint[];
  /** The user stack copy, its dyn_size bytes. */
  stack: Uint8Array;
}

/** perf's x86 sample register index of each DWARF register 0…16 (rax rdx rcx rbx rsi rdi rbp rsp r8…r15 rip). */
const PERF_REG_OF_DWARF = [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8];
const RBP = 6;
const RSP = 7;
const RIP = 16;
const PERF_REG_SP = 7;
const PERF_REG_IP = 8;

type Loc = { k: 'reg'; perf: number } | { k: 'mem'; addr: bigint } | { k: 'val'; v: bigint } | null;

/** The value of perf register `id` in the sample, undefined when the mask does not hold it. */
export function sampleReg(s: UnwindSample, id: number): bigint | undefined {
  if (((s.mask >> BigInt(id)) & 1n) === 0n) return undefined;
  let idx = 0;
  for (let b = 0; b < id; b++) if ((s.mask >> BigInt(b)) & 1n) idx++;
  return s.regs[idx];
}

class Fail extends Error {}

/**
 * The frames perf prints for the user part of a dwarf sample, callee first:
 * the sampled IP, then each caller's address (return address - 1).
 */
export function unwindUser(s: UnwindSample, lookup: (ip: bigint) => UnwindMap | undefined, maxStack: number): bigint[] {
  const ip0 = sampleReg(s, PERF_REG_IP);
  const sp0 = sampleReg(s, PERF_REG_SP);
  if (ip0 === undefined || sp0 === undefined || maxStack <= 0) return [];
  const stackEnd = sp0 + BigInt(s.stack.length);
  const dv = new DataView(s.stack.buffer, s.stack.byteOffset, s.stack.byteLength);
  const readMem = (addr: bigint): bigint => {
    if (addr >= sp0 && addr + 8n < stackEnd) return dv.getBigUint64(Number(addr - sp0), true);
    const m = lookup(addr);
    return m?.tables?.readU64(m.mapIp) ?? 0n;
  };
  const loc: Loc[] = [];
  for (let i = 0; i < NUM_REGS; i++) loc.push({ k: 'reg', perf: PERF_REG_OF_DWARF[i]! });
  const read = (l: Loc): bigint => {
    let v: bigint | undefined;
    if (l === null) v = undefined;
    else if (l.k === 'reg') v = sampleReg(s, l.perf);
    else if (l.k === 'mem') v = readMem(l.addr);
    else v = l.v;
    if (v === undefined) throw new Fail();
    return v;
  };
  const cur: Cursor = { ip: ip0, cfa: sp0, usePrev: false, sigFrame: false };
  const ips = [ip0];
  try {
    while (ips.length < maxStack) {
      if (step(cur, loc, lookup, read, readMem) <= 0) break;
      // perf's get_entries: the ip moves back into the call unless unw_is_signal_frame, which in
      // libunwind 1.6 reads the sigcontext format tdep_fetch_frame set from the FDE stepped *from*
      ips.push(cur.sigFrame ? cur.ip : BigInt.asUintN(64, cur.ip - 1n));
    }
  } catch (e) {
    if (!(e instanceof Fail) && !(e instanceof ExprError)) throw e;
  }
  return ips.filter((ip) => ip !== 0n);
}

/**
 * libunwind's cursor as far as perf's output sees it. sigFrame is its
 * sigcontext_format: set on each DWARF step from the CIE's 'S' augmentation
 * of the frame being left, kept as it was by a fallback step.
 */
interface Cursor {
  ip: bigint;
  cfa: bigint;
  usePrev: boolean;
  sigFrame: boolean;
}

/** One unw_step: 1 a caller found, 0 the end of the chain; throws Fail on an error (the walk ends). */
function step(
  c: Cursor,
  loc: Loc[],
  lookup: (ip: bigint) => UnwindMap | undefined,
  read: (l: Loc) => bigint,
  readMem: (a: bigint) => bigint,
): number {
  const prevIp = c.ip;
  const prevCfa = c.cfa;
  const pc = c.usePrev ? c.ip - 1n : c.ip;
  const m = lookup(pc);
  // find_proc_info: no map or no readable file → -EINVAL, which ends the walk
  if (!m?.tables?.hasTables) throw new Fail();
  const row = m.tables.row(pc, m.start, m.mapIp, m.loadBase);
  if (row) {
    const regVal = (n: number): bigint | undefined => {
      if (n === RSP) return c.cfa;
      if (n === RIP) return c.ip;
      const l = loc[n];
      return l === undefined ? undefined : read(l);
    };
    const ctx = { reg: regVal, read: readMem };
    let cfa: bigint;
    if (row.cfa.kind === 'reg') {
      const base = regVal(row.cfa.reg);
      if (base === undefined) throw new Fail();
      cfa = BigInt.asUintN(64, base + row.cfa.off);
    } else cfa = evalExpr(row.cfa.expr, ctx);
    const next: Loc[] = [];
    for (let i = 0; i < NUM_REGS; i++) next.push(apply(row.regs.get(i), loc, i, cfa, ctx));
    const ra = next[row.raReg] ?? null;
    for (let i = 0; i < NUM_REGS; i++) loc[i] = next[i]!;
    c.cfa = cfa;
    let ret: number;
    if (ra === null) {
      c.ip = 0n;
      ret = 0;
    } else {
      c.ip = read(ra);
      ret = 1;
    }
    if (c.ip === prevIp && c.cfa === prevCfa) throw new Fail();
    c.usePrev = !row.signal;
    c.sigFrame = row.signal;
    // x86-64 ABI: the end of the chain is a NULL rbp or an undefined return address
    if (loc[RBP] === null) {
      c.ip = 0n;
      ret = 0;
    }
    return ret;
  }
  return fallback(c, loc, read, readMem, prevIp, prevCfa);
}

function apply(
  rule: RegRule | undefined,
  loc: Loc[],
  i: number,
  cfa: bigint,
  ctx: { reg: (n: number) => bigint | undefined; read: (a: bigint) => bigint },
): Loc {
  if (!rule || rule.kind === 'same') return loc[i] ?? null;
  switch (rule.kind) {
    case 'undefined':
      return null;
    case 'offset':
      return { k: 'mem', addr: BigInt.asUintN(64, cfa + rule.off) };
    case 'valOffset':
      return { k: 'val', v: BigInt.asUintN(64, cfa + rule.off) };
    case 'register':
      return loc[rule.reg] ?? null;
    case 'expression':
      return { k: 'mem', addr: evalExpr(rule.expr, ctx, [cfa]) };
    case 'valExpression':
      return { k: 'val', v: evalExpr(rule.expr, ctx, [cfa]) };
  }
}

/**
 * unw_step when no FDE covers the address (-UNW_ENOINFO): a PLT stub
 * (`jmp *x(%rip); push $n; jmp …`) returns to [cfa]; else the frame-pointer
 * chain, when rbp points a little above the CFA.
 */
function fallback(
  c: Cursor,
  loc: Loc[],
  read: (l: Loc) => bigint,
  readMem: (a: bigint) => bigint,
  prevIp: bigint,
  prevCfa: bigint,
): number {
  let ret = 0;
  const w0 = readMem(c.ip);
  const w1 = readMem(c.ip + 8n);
  const plt = (w0 & 0xffffn) === 0x25ffn && ((w0 >> 48n) & 0xffn) === 0x68n && ((w1 >> 24n) & 0xffn) === 0xe9n;
  if (plt) {
    loc[RIP] = { k: 'mem', addr: c.cfa };
    c.cfa += 8n;
  } else if (loc[RBP] === null) {
    for (let i = 0; i < NUM_REGS; i++) loc[i] = null;
  } else {
    const rbp = read(loc[RBP] ?? null);
    // perf's access_mem never fails, so libunwind's "invalid previous rip" fix-up never applies
    let rbpLoc: Loc = null;
    let ripLoc: Loc = null;
    if (rbp !== 0n) {
      rbpLoc = { k: 'mem', addr: rbp };
      ripLoc = { k: 'mem', addr: rbp + 8n };
      if (rbp < c.cfa || rbp - c.cfa > 0x4000n) {
        rbpLoc = null;
        ripLoc = null;
      }
      c.cfa += 16n;
    }
    for (let i = 0; i < NUM_REGS; i++) loc[i] = null;
    loc[RBP] = rbpLoc;
    loc[RIP] = ripLoc;
    c.usePrev = true;
  }
  if (loc[RBP] === null) return 0;
  if (loc[RIP] !== null) {
    c.ip = read(loc[RIP] ?? null);
    ret = 1;
  } else c.ip = 0n;
  if (c.ip === prevIp && c.cfa === prevCfa) throw new Fail();
  return ret;
}
