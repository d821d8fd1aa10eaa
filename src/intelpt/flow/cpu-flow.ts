/**
 * Intel PT flow decoder for one CPU's trace: walks the code image driven by
 * packets, after the state machine of perf's intel-pt-decoder.c (6.1), so
 * that its error count and its instruction flow match `perf script`:
 *
 *   NO_PSB      scan to a PSB, read PSB+ (TSC, MODE, FUP), → IN_SYNC if an IP
 *   NO_IP       forget the last IP, then like ERR_RESYNC
 *   ERR_RESYNC  skip to the next packet that gives an IP (TIP/PGE/FUP/PSB+FUP)
 *   IN_SYNC     read packets: TNT → walk conditional branches (and compressed
 *               returns), TIP/TIP.PGD → walk to an indirect branch, FUP → walk
 *               to the FUP's IP then take the TIP that must follow (an
 *               asynchronous event: interrupt, INT3 trap)
 *
 * Errors carry perf's codes and resync points: a walk that meets a
 * conditional branch where a TIP was due (or an indirect branch where a FUP
 * IP was due) resyncs at the next IP packet; a bad RET compression, a missing
 * deferred TIP, a missing TIP after FUP, or unreadable code resyncs at the
 * next PSB (perf's ERR2/ERR3 = NO_PSB).
 *
 * The decoder can pause before a timing point (a TSC, or a PSB+ holding one)
 * at or after a given TSC: the session driver uses that to apply each text
 * poke at the first TSC at or after its time, as perf does (notes item 6).
 */
import { PacketCursor } from '../packets/cursor.js';
import { PT } from '../packets/kinds.js';
import { ERR_BAD_OPCODE, NEED_MORE_BYTES } from '../packets/raw-decode.js';
import type { Block, Insn } from '../../x86/block-cache.js';

/** perf's INTEL_PT_ERR_* codes as printed after "code". */
export const PtErr = {
  NOMEM: 1,
  INTERN: 2,
  BADPKT: 3,
  NODATA: 4,
  NOINSN: 5,
  MISMAT: 6,
  OVR: 7,
  LOST: 8,
  UNK: 9,
  NELOOP: 10,
} as const;

export const PT_ERR_MESSAGES: Record<number, string> = {
  1: 'Memory allocation failed',
  2: 'Internal error',
  3: 'Bad packet',
  4: 'No more data',
  5: 'Failed to get instruction',
  6: "Trace doesn't match instruction",
  7: 'Overflow packet',
  8: 'Lost trace data',
  9: 'Unknown error!',
  10: 'Never-ending loop',
};

export interface FlowError {
  cpu: number;
  code: number;
  message: string;
  /** Decoder IP at the error (0 when unknown). */
  ip: bigint;
  /** Last TSC seen (0 when none). */
  tsc: bigint;
  /** perf's est_timestamp: last TSC + 2 ticks per instruction walked since it (matches perf 6.1 on simulated files). */
  estTsc: bigint;
  /** Offset of the packet being handled, in this CPU's concatenated trace. */
  offset: number;
  /** What went wrong, in perf's debug-log words. */
  reason: string;
}

export const BranchKind = {
  cond: 'jcc',
  jmp: 'jmp',
  call: 'call',
  ret: 'ret',
  indirect: 'ind',
  traceBegin: 'tr strt',
  traceEnd: 'tr end',
  async: 'async',
} as const;

export interface FlowSink {
  /** Instructions insns[from..to) of a block were executed. */
  insns?(cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint): void;
  branch?(cpu: number, from: bigint, to: bigint, kind: string, tsc: bigint): void;
  error?(e: FlowError): void;
  /** Events for ptxed-style output. */
  event?(
    cpu: number,
    what: 'enabled' | 'disabled' | 'overflow' | 'interrupt' | 'exec-mode-64' | 'psb',
    ip: bigint,
    offset: number,
  ): void;
}

export interface BlockSource {
  get(start: bigint): Block;
}

enum St {
  /** perf's ERR1..ERR4 alias other states; ERR_MODE picks which (see PT_FLOW_ERR_STATE). */
  ERR2 = 100,
  ERR3 = 101,
  NO_PSB = 0,
  NO_IP,
  ERR_RESYNC,
  IN_SYNC,
  TNT,
  TIP,
  TIP_PGD,
  FUP,
}

/** Control results of the walkers (perf's -EAGAIN, INTEL_PT_RETURN …). */
const OK = 0;
const EAGAIN = 1;
const PAUSE = 2;
const EOF = 3;
const ERROR = 4;

const M16 = 0xffffn;
const M32 = 0xffffffffn;
const M48 = 0xffffffffffffn;
const M64 = 0xffffffffffffffffn;
const NO_STOP = 1n << 62n;

const ERR2_STATE: St = process.env.PT_FLOW_ERR2 === 'psb' ? St.NO_PSB : St.ERR_RESYNC;
const ERR3_STATE: St = process.env.PT_FLOW_ERR3 === 'psb' ? St.NO_PSB : St.ERR_RESYNC;

type BranchClass = 0 | 1 | 2; // 0 conditional, 1 indirect, 2 (handled inline) unconditional

export class CpuFlow {
  readonly cursor: PacketCursor;
  private st: St = St.NO_PSB;
  ip = 0n;
  private lastIp = 0n;
  private haveLastIp = false;
  private pge = false;
  private tntBits = 0; // bit (tntCount-1) is the next outcome
  private tntCount = 0;
  private stack: bigint[] = [];
  private retAddr = 0n;
  private tipIpc = 0;
  private fupIp = 0n;
  tsc = 0n;
  private stopTsc = NO_STOP;
  private noProgress = 0;
  private stuckIp = 0n;
  private stuckPrd = 0;
  private stuckCnt = 0;
  private lastInsn: Insn | undefined;
  errors = 0;
  insnCount = 0;
  readonly maxLoops = 100000;

  constructor(
    readonly cpu: number,
    trace: Uint8Array,
    private readonly blocks: BlockSource,
    private readonly sink: FlowSink,
    private readonly retCompression = true,
  ) {
    this.cursor = new PacketCursor(trace, { dialect: 'perf' });
  }

  get done(): boolean {
    return this.st === St.NO_PSB && this.cursor.atEnd;
  }

  /**
   * Decode until the end of the trace, or until the next timing point (TSC
   * packet, or PSB+ holding one) would reach `stopTsc`. Returns true at the end.
   */
  run(stopTsc: bigint = NO_STOP): boolean {
    this.stopTsc = stopTsc;
    for (;;) {
      let r = OK;
      switch (this.st) {
        case St.NO_PSB:
          r = this.sync();
          break;
        case St.NO_IP:
          this.haveLastIp = false;
          this.lastIp = 0n;
          this.ip = 0n;
          r = this.syncIp();
          break;
        case St.ERR_RESYNC:
          r = this.syncIp();
          break;
        case St.IN_SYNC:
          r = this.walkTrace();
          break;
        case St.TNT:
          r = this.walkTnt();
          break;
        case St.TIP:
        case St.TIP_PGD:
          r = this.walkTip();
          break;
        case St.FUP:
          r = this.walkFup();
          if (r === EAGAIN) r = this.walkFupTip();
          break;
      }
      if (r === PAUSE) return false;
      if (r === EOF) {
        this.st = St.NO_PSB;
        this.cursor.pos = this.cursor.end;
        return true;
      }
    }
  }

  // ---- packets ---------------------------------------------------------

  /** Next non-PAD packet into cursor.raw; returns its type, or -1 at the end / bad packet handled. */
  private next(): number {
    const c = this.cursor;
    for (;;) {
      if (c.atEnd) return -1;
      const n = c.next();
      if (n > 0) {
        if (c.raw.type === PT.PAD) continue;
        return c.raw.type;
      }
      if (n === NEED_MORE_BYTES) {
        c.pos = c.end;
        return -1;
      }
      // Bad packet: perf reports it and resyncs at the next PSB.
      this.fail(PtErr.BADPKT, n === ERR_BAD_OPCODE ? 'bad opcode' : 'bad packet', St.NO_PSB);
      c.syncForward();
      return -2;
    }
  }

  /** Would the packet at the cursor move time to ≥ stopTsc? (checked at resumable points) */
  private atStop(): boolean {
    if (this.stopTsc === NO_STOP) return false;
    const c = this.cursor;
    const b = c.bytes;
    let p = c.pos;
    while (p < c.end && b[p] === 0) p++;
    if (p >= c.end) return false;
    if (b[p] === 0x19) return this.readTsc(p) >= this.stopTsc;
    if (b[p] === 0x02 && b[p + 1] === 0x82) {
      // PSB+: look for its TSC before PSBEND
      const probe = new PacketCursor(b, { start: p, end: c.end, dialect: 'perf' });
      for (let i = 0; i < 64 && !probe.atEnd; i++) {
        if (probe.next() <= 0) return false;
        const t = probe.raw.type;
        if (t === PT.TSC) return this.readTsc(probe.last) >= this.stopTsc;
        if (t === PT.PSBEND) return false;
      }
    }
    return false;
  }

  /** The IP of the FUP inside the PSB+ at the cursor (last IP is 0 there), if any. */
  private psbFupIp(): bigint | undefined {
    const c = this.cursor;
    const probe = new PacketCursor(c.bytes, { start: c.pos, end: c.end, dialect: 'perf' });
    for (let i = 0; i < 64 && !probe.atEnd; i++) {
      if (probe.next() <= 0) return undefined;
      const r = probe.raw;
      if (r.type === PT.PSBEND) return undefined;
      if (r.type === PT.FUP) {
        const v = (BigInt(r.hi >>> 0) << 32n) | BigInt(r.lo >>> 0);
        if (r.ipc === 3) return v & (1n << 47n) ? (v & M48) | (M64 & ~M48) : v & M48;
        if (r.ipc === 6) return v;
        return undefined;
      }
    }
    return undefined;
  }

  private readTsc(p: number): bigint {
    const b = this.cursor.bytes;
    let v = 0n;
    for (let i = 7; i >= 1; i--) v = (v << 8n) | BigInt(b[p + i]!);
    return v;
  }

  private setTsc(): void {
    this.tsc = this.rawTsc();
    this.sinceTsc = 0;
  }

  private rawTsc(): bigint {
    const r = this.cursor.raw;
    return (BigInt(r.hi) << 32n) | BigInt(r.lo >>> 0);
  }

  private ipPayload(): bigint {
    const r = this.cursor.raw;
    return (BigInt(r.hi >>> 0) << 32n) | BigInt(r.lo >>> 0);
  }

  /** intel_pt_have_ip */
  private haveIp(): boolean {
    const ipc = this.cursor.raw.ipc;
    return ipc !== 0 && (this.haveLastIp || ipc === 3 || ipc === 6);
  }

  /** intel_pt_set_last_ip */
  private setLastIp(): void {
    const ipc = this.cursor.raw.ipc;
    const v = this.ipPayload();
    const l = this.lastIp;
    switch (ipc) {
      case 1:
        this.lastIp = (l & ~M16 & M64) | (v & M16);
        break;
      case 2:
        this.lastIp = (l & ~M32 & M64) | (v & M32);
        break;
      case 3:
        this.lastIp = v & (1n << 47n) ? (v & M48) | (M64 & ~M48) : v & M48;
        break;
      case 4:
        this.lastIp = (l & ~M48 & M64) | (v & M48);
        break;
      case 6:
        this.lastIp = v & M64;
        break;
      default:
        return;
    }
    this.haveLastIp = true;
  }

  private setIp(): void {
    this.setLastIp();
    this.ip = this.lastIp;
  }

  private fail(code: number, reason: string, next: St): number {
    this.pending = undefined;
    if (next === St.ERR2) next = ERR2_STATE;
    else if (next === St.ERR3) next = ERR3_STATE;
    this.st = next;
    this.errors++;
    this.sink.error?.({
      cpu: this.cpu,
      code,
      message: PT_ERR_MESSAGES[code] ?? 'Unknown error!',
      ip: this.ip,
      tsc: this.tsc,
      estTsc: this.tsc + 2n * BigInt(this.sinceTsc),
      offset: this.cursor.last,
      reason,
    });
    return ERROR;
  }

  // ---- sync --------------------------------------------------------------

  private sync(): number {
    this.pge = false;
    this.haveLastIp = false;
    this.lastIp = 0n;
    this.ip = 0n;
    this.stack.length = 0;
    this.tntCount = 0;
    if (!this.cursor.syncForward(true)) return EOF;
    if (this.atStop()) return PAUSE;
    this.haveLastIp = true;
    this.st = St.NO_IP;
    const r = this.walkPsb();
    if (r !== OK) return r;
    if (this.ip) this.st = St.IN_SYNC;
    return OK;
  }

  /** Read PSB+ (cursor at the PSB) up to and including PSBEND. */
  private walkPsb(clearStack = true): number {
    const t = this.next();
    if (t !== PT.PSB) return t === -1 ? EOF : OK;
    this.sink.event?.(this.cpu, 'psb', 0n, this.cursor.last);
    this.lastIp = 0n;
    this.haveLastIp = true;
    if (clearStack) this.stack.length = 0;
    for (;;) {
      const t2 = this.next();
      switch (t2) {
        case -1:
          return EOF;
        case -2:
          return ERROR;
        case PT.PSBEND:
          return OK;
        case PT.TSC:
          this.setTsc();
          break;
        case PT.MODE_EXEC:
          this.execMode64 = (this.cursor.raw.lo & 1) === 1;
          break;
        case PT.FUP:
          if (this.haveIp()) {
            this.setIp();
            this.pge = true;
          }
          break;
        case PT.OVF:
          return this.overflow();
        default:
          break;
      }
    }
  }

  /** intel_pt_sync_ip / intel_pt_walk_to_ip */
  private syncIp(): number {
    for (;;) {
      if (this.atStop()) return PAUSE;
      const t = this.next();
      switch (t) {
        case -1:
          return EOF;
        case -2:
          return ERROR;
        case PT.TIP_PGD:
          this.pge = false;
          if (this.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = St.IN_SYNC;
          this.sink.event?.(this.cpu, 'disabled', this.ip, this.cursor.last);
          this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceEnd, this.tsc);
          return OK;
        case PT.TIP_PGE:
          this.pge = true;
          if (this.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = St.IN_SYNC;
          this.enabled();
          this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
          return OK;
        case PT.TIP:
          this.pge = true;
          if (this.haveIp()) this.setIp();
          if (!this.ip) break;
          this.st = St.IN_SYNC;
          this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
          return OK;
        case PT.FUP:
          if (this.haveIp()) this.setIp();
          if (this.ip) {
            this.st = St.IN_SYNC;
            this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
            return OK;
          }
          break;
        case PT.PSB: {
          this.cursor.pos = this.cursor.last;
          const hadFup = this.psbFupIp() !== undefined;
          const r = this.walkPsb();
          if (r !== OK) return r;
          if (this.ip) {
            this.st = St.IN_SYNC;
            if (hadFup) this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
            return OK;
          }
          break;
        }
        case PT.TSC:
          this.setTsc();
          break;
        case PT.MODE_EXEC:
          this.execMode64 = (this.cursor.raw.lo & 1) === 1;
          break;
        case PT.OVF:
          return this.overflow();
        default:
          break;
      }
    }
  }

  private overflow(): number {
    this.sink.event?.(this.cpu, 'overflow', 0n, this.cursor.last);
    this.pge = false;
    this.tntCount = 0;
    return this.fail(PtErr.OVR, 'overflow packet', St.ERR_RESYNC);
  }

  // ---- IN_SYNC -----------------------------------------------------------

  private walkTrace(): number {
    for (;;) {
      if (this.atStop()) return PAUSE;
      const t = this.next();
      switch (t) {
        case -1:
          return EOF;
        case -2:
          return ERROR;
        case PT.TNT8:
        case PT.TNT64: {
          const r = this.cursor.raw;
          if (!r.count) break;
          this.tntCount = r.count;
          this.tntBits = r.hi * 4294967296 + (r.lo >>> 0);
          this.st = St.TNT;
          const w = this.walkTnt();
          if (w === EAGAIN) break;
          return w;
        }
        case PT.TIP_PGD:
          this.tipIpc = this.cursor.raw.ipc;
          if (this.tipIpc) this.setLastIp();
          this.st = St.TIP_PGD;
          return this.walkTip();
        case PT.TIP_PGE:
          this.pge = true;
          if (this.cursor.raw.ipc === 0) break;
          this.setIp();
          this.enabled();
          this.sink.branch?.(this.cpu, 0n, this.ip, BranchKind.traceBegin, this.tsc);
          return OK;
        case PT.OVF:
          return this.overflow();
        case PT.TIP:
          this.tipIpc = this.cursor.raw.ipc;
          if (this.tipIpc) this.setLastIp();
          this.st = St.TIP;
          return this.walkTip();
        case PT.FUP: {
          if (this.cursor.raw.ipc === 0) break;
          this.setLastIp();
          if (!this.pge) {
            this.ip = this.lastIp;
            break;
          }
          this.st = St.FUP;
          const w = this.walkFup();
          if (w !== EAGAIN) return w;
          return this.walkFupTip();
        }
        case PT.PSB: {
          this.cursor.pos = this.cursor.last;
          // perf's intel_pt_psb_with_fup: a PSB+ holding a FUP while tracing
          // is on means execution reached that IP: walk there first.
          const fup = this.pge ? this.psbFupIp() : undefined;
          if (fup !== undefined) {
            const c = this.walkInsn(fup);
            if (c < 0) return ERROR;
            if (c === 1) return this.fail(PtErr.MISMAT, 'Unexpected indirect branch', St.ERR_RESYNC);
            if (c === 0) return this.fail(PtErr.MISMAT, 'Unexpected conditional branch', St.ERR_RESYNC);
          }
          const r = this.walkPsb();
          if (r !== OK) return r;
          return OK;
        }
        case PT.TSC:
          this.setTsc();
          break;
        case PT.MODE_EXEC:
          this.execMode64 = (this.cursor.raw.lo & 1) === 1;
          break;
        default:
          break;
      }
    }
  }

  /** Take the next TNT outcome (true = taken). */
  private popTnt(): boolean {
    this.tntCount--;
    return Math.floor(this.tntBits / 2 ** this.tntCount) % 2 === 1;
  }

  private walkTnt(): number {
    for (;;) {
      const c = this.walkInsn(0n);
      if (c < 0) {
        this.tntCount = 0;
        return c === -1 ? ERROR : EOF;
      }
      const insn = this.lastInsn!;
      if (insn.op === 'ret') {
        const taken = this.tntCount > 0 && Math.floor(this.tntBits / 2 ** (this.tntCount - 1)) % 2 === 1;
        if (!this.retCompression) return this.fail(PtErr.MISMAT, 'RET when expecting conditional branch', St.ERR3);
        if (!this.retAddr) return this.fail(PtErr.MISMAT, 'Bad RET compression (stack empty)', St.ERR3);
        if (!taken) return this.fail(PtErr.MISMAT, 'Bad RET compression (TNT=N)', St.ERR3);
        this.popTnt();
        this.commit();
        const from = this.ip;
        this.ip = this.retAddr;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.ret, this.tsc);
        if (!this.tntCount) {
          this.st = St.IN_SYNC;
          return OK;
        }
        continue;
      }
      if (c === 1) {
        // Indirect branch while TNT bits remain: a deferred TIP must follow.
        const t = this.next();
        if (t === -1) return EOF;
        if (t === -2) return ERROR;
        if (t !== PT.TIP || this.cursor.raw.ipc === 0) {
          // perf's pkt_step = 0: the packet is not consumed, resync sees it again
          this.cursor.pos = this.cursor.last;
          return this.fail(PtErr.MISMAT, 'Missing deferred TIP for indirect branch', St.ERR3);
        }
        this.setLastIp();
        this.commit();
        const from = this.ip;
        this.ip = this.lastIp;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.indirect, this.tsc);
        continue;
      }
      // conditional
      const taken = this.popTnt();
      this.commit();
      const from = this.ip;
      if (taken) {
        this.ip = insn.target!;
        this.sink.branch?.(this.cpu, from, this.ip, BranchKind.cond, this.tsc);
      } else {
        this.ip += BigInt(insn.length);
      }
      if (!this.tntCount) {
        this.st = St.IN_SYNC;
        return taken ? OK : EAGAIN;
      }
    }
  }

  private walkTip(): number {
    for (;;) {
      const c = this.walkInsn(0n);
      if (c < 0) return c === -1 ? ERROR : EOF;
      if (c === 1) {
        this.commit();
        const from = this.ip;
        const pgd = this.st === St.TIP_PGD;
        this.st = St.IN_SYNC;
        if (pgd) this.pge = false;
        if (this.tipIpc !== 0) this.ip = this.lastIp;
        if (pgd) {
          this.sink.branch?.(this.cpu, from, this.tipIpc ? this.ip : 0n, BranchKind.traceEnd, this.tsc);
          this.sink.event?.(this.cpu, 'disabled', this.tipIpc ? this.ip : 0n, this.cursor.last);
        } else {
          this.sink.branch?.(this.cpu, from, this.tipIpc ? this.ip : 0n, BranchKind.indirect, this.tsc);
        }
        return OK;
      }
      return this.fail(PtErr.MISMAT, 'Conditional branch when expecting indirect branch', St.ERR_RESYNC);
    }
  }

  private walkFup(): number {
    this.fupIp = this.lastIp;
    for (;;) {
      const c = this.walkInsn(this.fupIp);
      if (c === 3) {
        this.st = St.IN_SYNC;
        return EAGAIN;
      }
      if (c < 0) return c === -1 ? ERROR : EOF;
      if (c === 1) return this.fail(PtErr.MISMAT, 'Unexpected indirect branch', St.ERR_RESYNC);
      return this.fail(PtErr.MISMAT, 'Unexpected conditional branch', St.ERR_RESYNC);
    }
  }

  private walkFupTip(): number {
    for (;;) {
      const t = this.next();
      switch (t) {
        case -1:
          return EOF;
        case -2:
          return ERROR;
        case PT.MODE_EXEC:
          continue;
        case PT.TIP_PGD: {
          this.st = St.IN_SYNC;
          this.pge = false;
          const from = this.ip;
          if (this.cursor.raw.ipc) this.setIp();
          this.sink.branch?.(this.cpu, from, this.cursor.raw.ipc ? this.ip : 0n, BranchKind.traceEnd, this.tsc);
          this.sink.event?.(this.cpu, 'disabled', from, this.cursor.last);
          return OK;
        }
        case PT.TIP_PGE:
        case PT.TIP: {
          this.st = St.IN_SYNC;
          const from = this.ip;
          if (this.cursor.raw.ipc) this.setIp();
          this.sink.event?.(this.cpu, 'interrupt', from, this.cursor.last);
          this.sink.branch?.(this.cpu, from, this.ip, BranchKind.async, this.tsc);
          return OK;
        }
        default:
          this.cursor.pos = this.cursor.last; // not consumed (pkt_step = 0)
          return this.fail(PtErr.MISMAT, 'Missing TIP after FUP', St.ERR3);
      }
    }
  }

  // ---- code walking --------------------------------------------------------

  /**
   * Walk from this.ip to the next branch that needs the trace, emitting the
   * instructions executed. Direct jumps and calls are followed here (perf's
   * INTEL_PT_RETURN round-trips, with its never-ending-loop check).
   * Returns 0 conditional, 1 indirect (this.lastInsn = the branch; this.ip =
   * its address), 3 reached `toIp` (not executed), -1 error reported.
   */
  private walkInsn(toIp: bigint): number {
    for (;;) {
      if (toIp && this.ip === toIp) return 3;
      const b = this.blocks.get(this.ip);
      const insns = b.insns;
      const n = insns.length;
      let upto = n;
      if (toIp && toIp > b.start && toIp < b.end) {
        for (let i = 0; i < n; i++) {
          if (insns[i]!.ip === toIp) {
            upto = i;
            break;
          }
        }
        if (upto < n) {
          if (upto > 0) this.emit(insns, 0, upto);
          this.ip = toIp;
          this.noProgress = 0;
          return 3;
        }
      }
      if (b.stop !== 'branch') {
        if (n) this.emit(insns, 0, n);
        this.ip = b.end;
        if (b.stop === 'limit') continue;
        this.noProgress = 0;
        return this.fail(PtErr.NOINSN, 'Failed to get instruction', St.ERR2) && -1;
      }
      const last = insns[n - 1]!;
      this.ip = last.ip;
      this.lastInsn = last;
      // The branch itself is reported only once the trace confirms it
      // (perf synthesizes no instruction sample for a branch that errors).
      if (n > 1) this.emit(insns, 0, n - 1);
      this.pending = insns;
      this.sinceTsc++;
      switch (last.op) {
        case 'jcc':
          this.noProgress = 0;
          return 0;
        case 'jmp':
        case 'call':
          if (!last.indirect) {
            this.commit();
            const next = last.ip + BigInt(last.length);
            if (last.op === 'call' && last.target !== next) this.stack.push(next);
            const from = last.ip;
            this.ip = last.target!;
            this.sink.branch?.(
              this.cpu,
              from,
              this.ip,
              last.op === 'call' ? BranchKind.call : BranchKind.jmp,
              this.tsc,
            );
            if (this.loopCheck()) return -1;
            continue;
          }
          if (last.op === 'call') this.stack.push(last.ip + BigInt(last.length));
          this.noProgress = 0;
          return 1;
        case 'ret':
          this.retAddr = this.stack.pop() ?? 0n;
          this.noProgress = 0;
          return 1;
        default:
          this.noProgress = 0;
          return 1;
      }
    }
  }

  /** perf's stuck-IP detector for chains of unconditional branches. */
  private loopCheck(): boolean {
    const cnt = this.noProgress++;
    if (cnt) {
      if (cnt === 1) {
        this.stuckIp = this.ip;
        this.stuckPrd = 1;
        this.stuckCnt = 1;
      } else if (cnt > this.maxLoops || this.ip === this.stuckIp) {
        this.fail(PtErr.NELOOP, 'Never-ending loop', St.ERR_RESYNC);
        return true;
      } else if (!--this.stuckCnt) {
        this.stuckPrd += 1;
        this.stuckCnt = this.stuckPrd;
        this.stuckIp = this.ip;
      }
    }
    return false;
  }

  private pending: readonly Insn[] | undefined;
  /** MODE.Exec seen since the last enable (libipt reports it after [enabled]). */
  private execMode64: boolean | undefined;

  private enabled(): void {
    if (!this.sink.event) return;
    this.sink.event(this.cpu, 'enabled', this.ip, this.cursor.last);
    if (this.execMode64) this.sink.event(this.cpu, 'exec-mode-64', this.ip, this.cursor.last);
    this.execMode64 = undefined;
  }
  /** Instructions walked since the last TSC packet (perf's timestamp_insn_cnt). */
  private sinceTsc = 0;

  /** Report the branch instruction the last walk stopped at. */
  private commit(): void {
    const p = this.pending;
    if (p) {
      this.pending = undefined;
      this.sinceTsc--;
      this.emit(p, p.length - 1, p.length);
    }
  }

  private emit(insns: readonly Insn[], from: number, to: number): void {
    this.insnCount += to - from;
    this.sinceTsc += to - from;
    this.sink.insns?.(this.cpu, insns, from, to, this.tsc);
  }
}
