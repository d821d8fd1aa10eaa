/**
 * libipt 2.3's block cache (pt_block_cache.h, pt_block_decoder.c
 * pt_blk_proceed_no_event_cached / _fill_cache), modelled to know where the
 * block decoder ends a block when it walks code without an event pending.
 * The walk itself is the instruction flow (insn-walk.ts); what the cache
 * changes is only where blocks end, and that depends on what was cached
 * before:
 * - the first time an IP is decoded, the fill walk ends the block after a
 *   near direct call, after a backward near direct jump (or any direct jump
 *   with end-on-jump), when the next IP leaves the section, and right before
 *   an instruction that already has an entry (the entry is extended back,
 *   the walk does not go on);
 * - an IP with an entry jumps to its decision point: a branch that needs
 *   trace ends the block there, a `decode` point (direct call, backward
 *   jump) is decoded and the walk goes on (unless end-on-call/-jump).
 * Entries are keyed by IP: the sections of the ptxed view (one per image)
 * do not overlap. An entry holds up to 255 instructions and a 16-bit
 * displacement; past that, or after 0x400 fill steps, libipt inserts a
 * trampoline (`again`), modelled too.
 */
import type { Insn } from '../../x86/block-cache.js';

type Qualifier = 'again' | 'cond' | 'decode' | 'indCall' | 'return' | 'indirect';

interface Entry {
  ninsn: number;
  /** From the entry's IP to its decision point (the next entry for `again`). */
  disp: bigint;
  q: Qualifier;
  /** The execution mode the entry was made in. */
  mode: string;
}

/** How far a walk without events goes: `n` instructions, ending at a branch that needs trace or not. */
export interface BlockPlan {
  n: number;
  /** `internal`: the fill walk met an entry made in another execution mode (libipt's pte_internal). */
  stop: 'decision' | 'end' | 'error' | 'internal';
}

export interface BlockFlags {
  endOnCall: boolean;
  endOnJump: boolean;
}

/** The instruction at an IP (undefined: not mapped or not decodable) and the section holding an IP. */
export interface CodeView {
  insn(ip: bigint): Insn | undefined;
  section(ip: bigint): number | undefined;
}

const FILL_STEPS = 0x400;
const MAX_NINSN = 0xff;
const DISP_MIN = -0x8000n;
const DISP_MAX = 0x7fffn;

/** Whether libipt needs trace to go past `i` (pt_insn_next_ip fails with pte_bad_query). */
export function needsTrace(i: Insn): boolean {
  if (i.op === 'other') return false;
  if ((i.op === 'jmp' || i.op === 'call') && !i.indirect) return false;
  return true;
}

function qualifier(i: Insn): Qualifier {
  if (i.op === 'jcc') return 'cond';
  if (i.op === 'ret') return 'return';
  if (i.op === 'call') return 'indCall';
  return 'indirect';
}

const nextIp = (i: Insn): bigint => (needsTrace(i) || i.op === 'other' ? i.ip + BigInt(i.length) : (i.target ?? 0n));

export class BlockCacheModel {
  private readonly entries = new Map<bigint, Entry>();
  private mode = '';

  constructor(
    private readonly code: CodeView,
    private readonly flags: BlockFlags,
  ) {}

  /**
   * Where the block that starts at `ip` ends when no event is pending
   * (pt_blk_proceed_no_event); fills the cache as libipt does. `modeKnown`:
   * entries made while the execution mode is unknown are not valid.
   */
  plan(ip: bigint, mode: string): BlockPlan {
    const modeKnown = mode !== 'unknown';
    this.mode = mode;
    const section = this.code.section(ip);
    return this.cached(ip, 0, section, modeKnown);
  }

  private cached(start: bigint, n0: number, section: number | undefined, modeKnown: boolean): BlockPlan {
    let ip = start;
    let n = n0;
    for (;;) {
      const e = this.entries.get(ip);
      if (!e) return this.fill(ip, n, section, modeKnown, FILL_STEPS);
      const dip = ip + e.disp;
      if (this.code.section(dip) !== section) return this.uncached(ip, n, section);
      n += e.ninsn;
      ip = dip;
      switch (e.q) {
        case 'again':
          continue;
        case 'decode': {
          const i = this.code.insn(ip);
          if (!i) return { n, stop: 'error' };
          if (needsTrace(i)) return { n, stop: 'decision' };
          if (this.endsOnFlag(i)) return { n, stop: 'end' };
          ip = nextIp(i);
          if (this.code.section(ip) !== section) return { n, stop: 'end' };
          continue;
        }
        default:
          return { n, stop: 'decision' };
      }
    }
  }

  /** pt_blk_proceed_no_event_uncached: no cache, on to the next branch that needs trace. */
  private uncached(start: bigint, n0: number, section: number | undefined): BlockPlan {
    let ip = start;
    let n = n0;
    for (;;) {
      const i = this.code.insn(ip);
      if (!i) return { n, stop: 'error' };
      if (n > 0 && this.code.section(ip) !== section) return { n, stop: 'end' };
      n++;
      if (needsTrace(i)) return { n, stop: 'decision' };
      if (this.endsOnFlag(i)) return { n, stop: 'end' };
      ip = nextIp(i);
    }
  }

  private endsOnFlag(i: Insn): boolean {
    return (this.flags.endOnCall && i.op === 'call') || (this.flags.endOnJump && i.op === 'jmp');
  }

  private set(ip: bigint, e: Entry, modeKnown: boolean): void {
    if (modeKnown) this.entries.set(ip, e);
  }

  private fill(ip: bigint, n0: number, section: number | undefined, modeKnown: boolean, steps: number): BlockPlan {
    const i = this.code.insn(ip);
    if (!i) return { n: n0, stop: 'error' };
    // no block switches sections
    if (n0 > 0 && this.code.section(ip) !== section) return { n: n0, stop: 'end' };
    const n = n0 + 1;
    if (needsTrace(i)) {
      this.set(ip, { ninsn: 1, disp: 0n, q: qualifier(i), mode: this.mode }, modeKnown);
      return { n, stop: 'decision' };
    }
    const nip = nextIp(i);
    const decode: Entry = { ninsn: 1, disp: 0n, q: 'decode', mode: this.mode };
    const backward = i.op === 'jmp' && nip < ip + BigInt(i.length);
    if (
      i.op === 'call' ||
      (i.op === 'jmp' && (backward || this.flags.endOnJump)) ||
      this.code.section(nip) !== section
    ) {
      this.set(ip, decode, modeKnown);
      return { n, stop: 'end' };
    }
    let next = this.entries.get(nip);
    // the walk goes on: filling the next instruction's entry first, or along its entry when it has one
    let r: BlockPlan | undefined;
    if (!next) {
      if (steps - 1 === 0) {
        this.trampoline(ip, nip, modeKnown);
        return { n, stop: 'end' };
      }
      r = this.fill(nip, n, section, modeKnown, steps - 1);
      next = this.entries.get(nip);
      if (!next) return r;
    }
    // (a fill that meets an entry of another execution mode fails: an exec mode change inside the cache)
    if (!r && next.mode !== this.mode) return { n, stop: 'internal' };
    const dip = nip + next.disp;
    if (this.code.section(dip) !== section) return r ?? { n, stop: 'end' };
    const disp = dip - ip;
    if (next.ninsn + 1 > MAX_NINSN || disp < DISP_MIN || disp > DISP_MAX) this.trampoline(ip, nip, modeKnown);
    else this.set(ip, { ninsn: next.ninsn + 1, disp, q: next.q, mode: this.mode }, modeKnown);
    return r ?? this.cached(nip, n, section, modeKnown);
  }

  private trampoline(ip: bigint, nip: bigint, modeKnown: boolean): void {
    const disp = nip - ip;
    const fits = disp >= DISP_MIN && disp <= DISP_MAX;
    const mode = this.mode;
    this.set(ip, fits ? { ninsn: 1, disp, q: 'again', mode } : { ninsn: 1, disp: 0n, q: 'decode', mode }, modeKnown);
  }
}
