/**
 * The instruction flow of libipt 2.3's instruction decoder, as `ptxed
 * --insn-decoder` prints it: walk the code from the IP an event gives,
 * taking conditional branches from TNT events and indirect ones from TIP
 * events, and apply each event where libipt binds it — before the
 * instruction at its IP (enabled, overflow, interrupt, exec mode, tsx,
 * exstop, mwait, ptwrite, async paging…), right away when it has no IP
 * (cbr, pwre, pwrx, mnt, stop…), or after the branch it ends at (disabled, unless the walk reaches its IP).
 * On an error it reports the trace offset and IP and resynchronizes at the
 * next PSB, as ptxed does, or (--resync-on-error) goes on at the failing event.
 */
import { BlockCache, type Insn } from '../../x86/block-cache.js';
import { EventDecoder } from './event-decoder.js';
import { PtxedClock } from './tick-clock.js';
import { type AddrFilter, filterAllows, filterConfigured } from './addr-filter.js';
import { newEvent, PtDecodeError, type ExecMode, type PtEvent } from './event-types.js';

export type { PtxedDecodeOptions, PtxedErrorKind, PtxedResult, PtxedSink } from './walk-types.js';
import { type PtxedDecodeOptions, type PtxedResult, type PtxedSink, resumeAfter, STANDALONE } from './walk-types.js';

/** Decode a raw PT stream over the code `read` gives, reporting to `sink` what ptxed would print. */
export function decodePtxed(
  trace: Uint8Array,
  read: (addr: bigint, len: number) => Uint8Array | undefined,
  sink: PtxedSink,
  o: PtxedDecodeOptions,
): PtxedResult {
  const w = new InsnWalk(new EventDecoder(trace, o), new BlockCache(read), sink, o);
  w.run();
  return { instructions: w.instructions, errors: w.errors };
}

class InsnWalk {
  instructions = 0;
  errors = 0;
  private ip = 0n;
  private enabled = false;
  private speculative = false;
  mode: ExecMode = 'unknown';
  private lastDisableIp = 0n;
  private retstack: bigint[] = [];
  private cur: PtEvent | undefined;
  /** Where an error outside an instruction is reported: after the last instruction walked (ptxed's insn.ip). */
  private errIp = 0n;
  private inStep = false;
  /** Still reading the status of the PSB+ decoding started at. */
  private starting = false;
  private clock: PtxedClock;
  /** The last TNT event ran out on the instruction just walked. */
  private tntDone = false;

  constructor(
    private readonly dec: EventDecoder,
    private readonly code: BlockCache,
    private readonly sink: PtxedSink,
    o: PtxedDecodeOptions,
  ) {
    this.retComp = o.retCompression ?? true;
    this.resyncOnError = o.resyncOnError ?? false;
    this.ticks = o.tick ?? false;
    this.filter = o.filter;
    this.skl014 = o.errata.skl014;
    this.clock = new PtxedClock(this.ticks);
  }
  private readonly ticks: boolean;
  private readonly filter: AddrFilter | undefined;
  private readonly skl014: boolean;
  private readonly retComp: boolean;
  private readonly resyncOnError: boolean;
  /** Resynced at a failing event: the next TIP gives the IP. */
  private resynced = false;
  private lastResyncAt = -1;
  /** The offset an error is reported at when it is not the decoder's (a lookahead past a TNT). */
  private errAt: number | undefined;
  private holdOffset: number | undefined;
  private unplaced: PtEvent | undefined | null;
  private lastResyncEvent: PtEvent | undefined;

  run(): void {
    let lastSync = -1;
    // set after an error with --resync-on-error: the IP a failed resync is reported at
    let resyncIp: bigint | undefined;
    for (;;) {
      const resynced = resyncIp !== undefined && this.resync(resyncIp);
      resyncIp = undefined;
      if (!resynced) {
        try {
          if (!this.dec.syncForward()) return;
        } catch (e) {
          if (!(e instanceof PtDecodeError)) throw e;
          if (e.code === 'eos') return;
          this.errors++;
          this.sink.error(this.dec.offset, 0n, e.code, 'sync error');
          if (this.dec.cursor.sync <= lastSync) return;
          lastSync = this.dec.cursor.sync;
          continue;
        }
        this.resetFlow(false);
      }
      try {
        this.walk();
      } catch (e) {
        if (!(e instanceof PtDecodeError)) throw e;
        if (e.code === 'eos') {
          if (this.enabled) this.sink.end?.();
          return;
        }
        this.errors++;
        const at = this.errAt ?? this.dec.offset;
        this.errAt = undefined;
        const ip = this.inStep ? this.ip : this.errIp;
        this.sink.error(at, ip, e.code, 'error');
        // (a failed resync is reported after the last instruction walked, even for an error inside one)
        if (this.resyncOnError && this.resyncProgress(at)) resyncIp = this.errIp;
      }
    }
  }

  /**
   * pt_insn_resync / pt_blk_resync: go on at the event that failed, or at
   * the next one the event decoder gives; when that fails too, ptxed reports
   * a `resync error` at the IP of the error and syncs at the next PSB (false).
   */
  private resync(ip: bigint): boolean {
    this.resetFlow(true);
    // (ptxed prints the event it resynced at without an offset; at an enable, a disable first)
    this.unplaced = this.cur;
    if (this.cur?.type === 'enabled' && !this.cur.statusUpdate) {
      this.unplaced = newEvent('disabled');
      this.unplaced.ipSuppressed = true;
      this.print(this.unplaced);
    }
    if (this.cur) return true;
    try {
      this.cur = this.dec.next();
      return true;
    } catch (e) {
      if (!(e instanceof PtDecodeError)) throw e;
      // (the end of the trace too: ptxed reports it)
      this.errors++;
      this.sink.error(this.dec.offset, ip, e.code, 'resync error');
      return false;
    }
  }

  /**
   * The walk's state after a sync (all of it) or a resync at the failing
   * event (`keep`): that event stays current, the exec mode and the time stay,
   * the IP comes from the next event that gives one.
   */
  private resetFlow(keep: boolean): void {
    this.ip = 0n;
    this.enabled = false;
    this.speculative = false;
    this.retstack = [];
    this.errIp = 0n;
    this.tntDone = false;
    this.holdOffset = undefined;
    this.resynced = keep;
    if (keep) return;
    this.mode = 'unknown';
    this.cur = undefined;
    this.clock = new PtxedClock(this.ticks);
  }

  /** Resyncing again at the offset of the last resync, with the same event, would loop: sync at a PSB. */
  private resyncProgress(at: number): boolean {
    const same = at === this.lastResyncAt && this.cur === this.lastResyncEvent;
    this.lastResyncAt = at;
    this.lastResyncEvent = this.cur;
    return !same;
  }

  private walk(): void {
    this.starting = !this.cur || this.cur.statusUpdate;
    this.inStep = false;
    for (;;) {
      if (!this.cur) {
        this.cur = this.dec.next();
        // (a TNT dropped at a resync passes the mark of the event resynced at to the next one)
        if (this.unplaced === null) this.unplaced = this.cur;
        if (!this.cur.statusUpdate) this.starting = false;
        if (this.tntDone && this.cur.type === 'tnt') this.emitTick(this.cur.tsc, this.ip);
        this.tntDone = false;
      }
      const ev = this.cur;
      if (this.applyBefore(ev)) {
        if (ev.statusUpdate) this.sink.status?.(ev, this.offset);
        this.cur = undefined;
        continue;
      }
      this.inStep = true;
      this.step();
      this.inStep = false;
    }
  }

  /** Apply the event if it takes effect before the instruction at the current IP; false when it must wait. */
  private applyBefore(ev: PtEvent): boolean {
    const at = ev.ipSuppressed || ev.ip === this.ip;
    switch (ev.type) {
      case 'enabled':
        if (ev.statusUpdate) {
          // the PSB+ decoding starts at enables tracing; a later PSB+ must agree with the flow
          if (!this.enabled) {
            if (!this.starting) throw new PtDecodeError('bad_status_update');
            this.ip = ev.ip;
            this.enabled = true;
          }
          return true;
        }
        if (this.enabled) throw new PtDecodeError('bad_context');
        if (ev.ipSuppressed) throw new PtDecodeError('noip');
        this.ip = ev.ip;
        this.enabled = true;
        ev.resumed = this.lastDisableIp === ev.ip && this.lastDisableIp !== 0n;
        return this.print(ev);
      case 'disabled':
        if (ev.statusUpdate) {
          this.enabled = false;
          return true;
        }
        if (!this.enabled) return this.print(ev);
        // (libipt 2.3 disables before the instruction at the TIP.PGD's IP when the walk gets there)
        if (ev.ipSuppressed || ev.ip !== this.ip) return false;
        ev.beforeInsn = true;
        this.disableAfter(ev, this.ip, this.ip);
        return true;
      case 'async_disabled':
        if (!this.enabled) throw new PtDecodeError('bad_context');
        if (ev.from !== this.ip) return false;
        this.enabled = false;
        this.lastDisableIp = this.ip;
        return this.print(ev);
      case 'async_branch':
        if (!this.enabled) throw new PtDecodeError('bad_context');
        if (ev.from !== this.ip) return false;
        this.ip = ev.ip;
        return this.print(ev);
      case 'overflow':
        this.speculative = false;
        if (ev.ipSuppressed) this.enabled = false;
        else {
          this.ip = ev.ip;
          this.enabled = true;
        }
        // (libipt keeps the return stack across an overflow: a compressed return after it still pops)
        return this.print(ev);
      case 'exec_mode':
        if (this.resumeAt(ev)) return this.print(ev);
        if (!at && this.enabled) return false;
        if (ev.statusUpdate && this.enabled && this.mode !== 'unknown' && this.mode !== ev.mode)
          throw new PtDecodeError('bad_status_update');
        this.mode = ev.mode ?? 'unknown';
        return this.print(ev);
      case 'tsx':
        if (!at && this.enabled) return false;
        this.speculative = ev.speculative ?? false;
        return this.print(ev);
      case 'paging':
      case 'vmcs':
        // bound to the MOV CR3 / VMPTRLD that caused it while tracing is on
        if (this.enabled) return false;
        return this.print(ev);
      case 'ptwrite':
        // bound to the PTWRITE instruction (at its IP when given): reported after it (afterInsn)
        if (this.enabled) return false;
        return this.print(ev);
      case 'swintr':
      case 'syscall':
      case 'iret':
      case 'uiret':
      case 'vmentry':
        // with an IP they bind to the instruction there (IRET, UIRET, VMLAUNCH, INT n, SYSCALL), which
        // libipt's decoders handle differently (not modelled: the event waits, as for other instructions)
        if (!ev.ipSuppressed && this.enabled) return false;
        return this.print(ev);
      case 'async_paging':
      case 'async_vmcs':
      case 'exstop':
      case 'mwait':
      case 'iflags':
      case 'trig':
      case 'tick':
      case 'interrupt':
      case 'smi':
      case 'rsm':
      case 'sipi':
      case 'init':
      case 'vmexit':
      case 'shutdown':
      case 'uintr':
        if (!at && this.enabled) return false;
        return this.print(ev);
      case 'cbr':
      case 'pwre':
      case 'pwrx':
      case 'mnt':
      case 'stop':
        return this.print(ev);
      case 'ignore':
        return true;
      case 'tip':
        if (this.resumeAt(ev)) return true;
        if (!this.enabled) throw new PtDecodeError('bad_context');
        return false;
      case 'tnt':
        // after a resync, TNT bits before the first IP are dropped
        if (!this.enabled && this.resynced) {
          if (this.unplaced === ev) this.unplaced = null;
          return true;
        }
        if (!this.enabled) throw new PtDecodeError('bad_context');
        return false;
    }
  }

  /**
   * The decoder's offset (pt_insn_get_offset): past the last event fetched,
   * but held before a TIP found past a TNT that still has bits until the TNT is used up.
   */
  private get offset(): number {
    return this.holdOffset ?? this.dec.offset;
  }

  /** After a resync, the first TIP or exec mode with an IP is where the flow goes on. */
  private resumeAt(ev: PtEvent): boolean {
    if (this.enabled || !this.resynced || ev.ipSuppressed) return false;
    this.ip = ev.ip;
    this.enabled = true;
    this.resynced = false;
    return true;
  }

  private print(ev: PtEvent): true {
    if (!ev.statusUpdate) this.sink.event(ev, ev === this.unplaced ? undefined : this.offset);
    this.clock.delivered(ev);
    return true;
  }

  private emitTick(tsc: bigint | undefined, ip: bigint): boolean {
    const tick = this.clock.tick(tsc, ip);
    if (tick) this.print(tick);
    return tick !== undefined;
  }

  /** Decode and report the instruction at the IP, and move to the next IP the trace says. */
  private step(): void {
    if (!this.enabled) throw new PtDecodeError('no_enable');
    const block = this.code.get(this.ip);
    const insn = block.insns[0];
    if (!insn) throw new PtDecodeError(block.stop === 'invalid' ? 'bad_insn' : 'nomap');
    const at = { pending: this.cur, mode: this.mode, offset: this.offset };
    this.sink.insn(this.ip, this.speculative, insn, this.clock.time, at);
    this.instructions++;
    const next = this.ip + BigInt(insn.length);
    this.errIp = next;
    this.afterInsn(this.ip);
    const ev = this.cur;
    switch (insn.op) {
      case 'other':
        this.ip = next;
        return;
      case 'jcc':
        this.ip = this.takeTnt(ev, next) ? (insn.target ?? next) : next;
        return;
      case 'jmp':
      case 'call':
        if (!insn.indirect) {
          if (insn.op === 'call') this.retstack.push(next);
          this.ip = insn.target ?? next;
          // (under SKL014 the IP is unknown: ptxed never reports the next enable there as resumed)
          if (ev?.type === 'disabled' && this.disablesAtDirect(ev))
            this.disableAfter(ev, next, ev.ipSuppressed ? 0n : this.ip);
          return;
        }
        if (insn.op === 'call') this.retstack.push(next);
        this.takeTip(ev, next, insn);
        return;
      case 'ret':
        if (this.retComp && ev?.type === 'tnt') {
          // a compressed return is a taken TNT bit (ptxed reports errors after the RET)
          const taken = this.takeTnt(ev, next);
          const to = this.retstack.pop();
          this.ip = next;
          if (!taken) throw new PtDecodeError('bad_retcomp');
          if (to === undefined) throw new PtDecodeError('retstack_empty');
          this.ip = to;
          return;
        }
        this.takeTip(ev, next, insn);
        return;
      default:
        // far branches, syscall/sysret, iret, int: the target comes in a TIP
        this.takeTip(ev, next, insn);
    }
  }

  /**
   * Events reported after the instruction they bind to (a PTWRITE's payload
   * at the FUP's IP), and the standalone ones that follow them.
   */
  private afterInsn(ip: bigint): void {
    let ev = this.cur;
    if (ev?.type !== 'ptwrite' || ev.ipSuppressed || ev.ip !== ip) return;
    for (;;) {
      this.print(ev);
      this.cur = ev = this.dec.next();
      if (!STANDALONE.has(ev.type)) return;
    }
  }

  /**
   * Whether a TIP.PGD binds to the direct jump or call just walked (its
   * target is this.ip): with an IP, when it is the target; without one, only
   * under the SKL014 workaround (pt_insn_at_skl014): the erratum is on, an
   * address filter is configured and the target is outside it.
   */
  private disablesAtDirect(ev: PtEvent): boolean {
    if (!ev.ipSuppressed) return ev.ip === this.ip;
    const f = this.filter;
    return this.skl014 && f !== undefined && filterConfigured(f) && !filterAllows(f, this.ip);
  }

  /** The next outcome of the current TNT event (true = taken); `next` follows the branch. */
  private takeTnt(ev: PtEvent | undefined, next: bigint): boolean {
    if (ev?.type === 'disabled') {
      // a TIP.PGD left pending by a direct branch: tracing stopped at this branch
      this.disableAfter(ev, next, next);
      return false;
    }
    if (ev?.type !== 'tnt' || !ev.size) throw new PtDecodeError('bad_query');
    ev.size--;
    const taken = Math.floor((ev.bits ?? 0) / 2 ** ev.size) % 2 === 1;
    const ticked = this.emitTick(ev.tsc, next);
    if (!ev.size) {
      this.holdOffset = undefined;
      // a TNT used up without a tick makes the decoder look at the next event now (a TNT there may tick)
      this.cur = undefined;
      this.tntDone = !ticked;
    }
    return taken;
  }

  /** The event after a TNT with bits left; none when it cannot be decoded (the query does not match then). */
  private lookPastTnt(): PtEvent | undefined {
    try {
      return this.dec.next();
    } catch (e) {
      if (e instanceof PtDecodeError) return undefined;
      throw e;
    }
  }

  private takeTip(ev: PtEvent | undefined, next: bigint, insn: Insn): void {
    if (ev?.type === 'tnt' && ev.size) {
      // libipt looks past a TNT that still has bits for the TIP; the TNT's bits stay for later branches
      this.errAt = this.dec.offset;
      const tip = this.lookPastTnt();
      if (tip?.type !== 'tip') {
        this.cur = tip;
        throw new PtDecodeError('bad_query');
      }
      const held = this.errAt;
      this.errAt = undefined;
      this.cur = tip;
      this.takeTip(tip, next, insn);
      this.cur = ev;
      this.holdOffset ??= held;
      return;
    }
    if (ev?.type === 'tip') {
      if (ev.ipSuppressed) throw new PtDecodeError('noip');
      const from = this.ip;
      this.ip = ev.ip;
      this.cur = undefined;
      this.emitTick(ev.tsc, from);
      return;
    }
    if (ev?.type === 'disabled') {
      this.disableAfter(ev, next, resumeAfter(insn, next));
      return;
    }
    throw new PtDecodeError('bad_query');
  }

  /**
   * A TIP.PGD: the branch just walked left the traced region. `reached` is
   * the IP the decoder got to on its own (a direct branch's target, after a
   * call that needed trace, else none: 0): a TIP.PGE there is `[resumed]`.
   */
  private disableAfter(ev: PtEvent, next: bigint, reached: bigint): void {
    this.enabled = false;
    this.lastDisableIp = reached;
    this.ip = ev.ipSuppressed ? next : ev.ip;
    this.cur = undefined;
    this.print(ev);
  }
}
