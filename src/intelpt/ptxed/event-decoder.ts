/**
 * Packets to events, with the binding rules of libipt 2.3's event decoder
 * (pt_event_decoder.c): a packet either makes an event at once
 * ("standalone": TNT, CBR, PWRE, STOP…), or queues one that a later packet
 * completes (MODE.Exec → the next TIP/TIP.PGE, EXSTOP/PTW/MODE.TSX with IP →
 * the next FUP, MWAIT → the next EXSTOP, a FUP → the TIP of an asynchronous
 * branch), and PSB+ packets are status updates published at PSBEND. OVF
 * binds to the FUP that ends it (tracing resumed) or stands alone (tracing
 * disabled), with the SKD010, APL11 and APL12 errata handled as libipt does.
 * Written from libipt's sources; not a copy.
 */
import { LastIp } from '../packets/last-ip.js';
import { PacketCursor } from '../packets/cursor.js';
import { ERR_BAD_OPCODE, ERR_BAD_PACKET } from '../packets/raw-decode.js';
import { toPacket, type IpPacket, type Packet } from '../packets/packet.js';
import { TimeCalibration, TimeTracker } from '../timing.js';
import { type PtEvent, type PtEventType, PtDecodeError, newEvent } from './event-types.js';
import { decodeOvf } from './event-ovf.js';
import { decodeCfe, decodeEvd } from './event-cfe.js';
import { decodeFup, decodeTip, decodeTipPge, decodeTipPgd } from './event-ip.js';
import { decodePsbHeader } from './event-psb.js';
import { execMode, Lookahead, timeCheck } from './event-support.js';
import { type CurPacket, EVB, type EventDecoderOptions, type EventDecoderState, type Queued } from './event-state.js';

export { type CurPacket, EVB, type EventDecoderOptions } from './event-state.js';

/**
 * The event decoder; its state is shared with the PSB+ (event-psb.ts) and
 * OVF (event-ovf.ts) halves of the packet rules, and with nothing else.
 */
export class EventDecoder implements EventDecoderState {
  readonly cursor: PacketCursor;
  packet: CurPacket = { kind: 'invalid', offset: 0, size: 0, error: new PtDecodeError('nosync') };
  queue: Queued[] = [];
  readonly ip = new LastIp();
  enabled = false;
  /** The current packet was bound by an event already reported (libipt decoder->bound). */
  bound = false;
  event: PtEvent | undefined;
  modeValid = false;
  csl = false;
  csd = false;
  iflag = false;
  time = new TimeTracker();
  tcal = new TimeCalibration();

  constructor(
    readonly bytes: Uint8Array,
    readonly o: EventDecoderOptions,
  ) {
    this.cursor = new PacketCursor(bytes, { dialect: 'libipt-2.3' });
  }

  /** Offset of the current packet (pt_evt_get_offset). */
  get offset(): number {
    return this.packet.kind === 'invalid' ? this.cursor.pos : this.packet.offset;
  }

  private reset(): void {
    this.queue = [];
    this.ip.reset();
    this.enabled = false;
    this.bound = false;
    this.event = undefined;
    this.modeValid = false;
    this.time = new TimeTracker();
    this.tcal = new TimeCalibration();
  }

  /** pt_evt_sync_forward: to the next PSB, then its PSB+; false at the end of the trace. */
  syncForward(): boolean {
    this.reset();
    if (!this.cursor.syncForward()) return false;
    this.fetchPacket();
    if (this.packet.kind !== 'psb') throw new PtDecodeError('nosync');
    decodePsbHeader(this);
    return true;
  }

  /** The next event (pt_evt_next); throws PtDecodeError (eos at the end of the trace). */
  next(): PtEvent {
    for (;;) {
      const done = this.decodePacket();
      if (done) break;
      this.bound = false;
      this.fetchPacket();
    }
    const ev = this.event;
    this.event = undefined;
    if (!ev) throw new PtDecodeError('internal');
    return ev;
  }

  fetchPacket(): void {
    do {
      const at = this.cursor.pos;
      const n = this.cursor.next();
      if (n <= 0) {
        const code = n === ERR_BAD_OPCODE ? 'bad_opc' : n === ERR_BAD_PACKET ? 'bad_packet' : 'eos';
        this.packet = { kind: 'invalid', offset: at, size: 0, error: new PtDecodeError(code) };
        return;
      }
      this.packet = toPacket(this.cursor.raw, at);
    } while (this.packet.kind === 'pad');
  }

  enqueue(bind: number, type: PtEventType): PtEvent {
    const ev = newEvent(type);
    this.queue.push({ bind, ev });
    return ev;
  }
  dequeue(mask: number): PtEvent | undefined {
    const i = this.queue.findIndex((q) => (q.bind & mask) !== 0);
    if (i < 0) return undefined;
    return this.queue.splice(i, 1)[0]?.ev;
  }
  find(mask: number, type: PtEventType): PtEvent | undefined {
    return this.queue.find((q) => (q.bind & mask) !== 0 && q.ev.type === type)?.ev;
  }
  pending(mask: number): boolean {
    return this.queue.some((q) => (q.bind & mask) !== 0);
  }

  /** Publish a standalone event for the current packet and move past it. */
  standalone(ev: PtEvent): true {
    this.stamp(ev);
    this.event = ev;
    this.fetchPacket();
    return true;
  }
  stamp(ev: PtEvent): void {
    const t = this.time.queryTsc();
    if (!t.error) ev.tsc = t.tsc;
  }
  setIp(ev: PtEvent): void {
    if (this.ip.haveIp && !this.ip.suppressed) ev.ip = this.ip.ip;
    else ev.ipSuppressed = true;
  }
  updateIp(p: IpPacket): void {
    if (!this.ip.update(p.ipc, p.ip ?? 0n)) throw new PtDecodeError('bad_packet');
  }

  /** Decode the current packet: true when it made an event, false when more packets are needed. */
  private decodePacket(): boolean {
    const p = this.packet;
    switch (p.kind) {
      case 'invalid':
        throw p.error;
      case 'tnt.8':
      case 'tnt.64': {
        if (!this.enabled) throw new PtDecodeError('bad_context');
        const ev = newEvent('tnt');
        ev.bits = Number(p.bits);
        ev.size = p.count;
        return this.standalone(ev);
      }
      case 'fup':
        return decodeFup(this, p);
      case 'tip':
        return decodeTip(this, p);
      case 'tip.pge':
        return decodeTipPge(this, p);
      case 'tip.pgd':
        return decodeTipPgd(this, p);
      case 'psb':
        decodePsbHeader(this);
        return this.decodePacket();
      case 'psbend':
        return this.decodePsbend();
      case 'ovf':
        return decodeOvf(this);
      case 'mode.exec':
        this.decodeModeExec(p.csl, p.csd, p.iflag);
        return false;
      case 'mode.tsx': {
        if (this.enabled) {
          const ev = this.enqueue(p.abrt ? EVB.fup : EVB.fupBound, 'tsx');
          ev.speculative = p.intx;
          ev.aborted = p.abrt;
          return false;
        }
        const ev = newEvent('tsx');
        ev.speculative = p.intx;
        ev.aborted = p.abrt;
        ev.ipSuppressed = true;
        return this.standalone(ev);
      }
      case 'pip':
      case 'vmcs':
        return this.decodePipVmcs(p.kind === 'pip' ? p : undefined, p.kind === 'vmcs' ? p.base : 0n);
      case 'cbr': {
        timeCheck(this.time.updateCbr(p.ratio));
        timeCheck(this.tcal.updateCbr(p.ratio, this.o.timing));
        const ev = newEvent('cbr');
        ev.ratio = p.ratio;
        return this.standalone(ev);
      }
      case 'mnt': {
        const ev = newEvent('mnt');
        ev.payload = p.payload;
        return this.standalone(ev);
      }
      case 'stop':
        return this.standalone(newEvent('stop'));
      case 'exstop':
        return this.decodeExstop(p.ipBit);
      case 'mwait': {
        const ev = this.enqueue(EVB.exstop, 'mwait');
        ev.hints = p.hints;
        ev.ext = p.ext;
        return false;
      }
      case 'pwre': {
        // ptxed 2.3 reports a PWRE just before the PWRX that ends the power state, and never without one
        const ev = this.enqueue(EVB.pwrx, 'pwre');
        ev.state = p.state;
        ev.subState = p.subState;
        ev.hw = p.hw;
        this.stamp(ev);
        return false;
      }
      case 'pwrx': {
        const pwre = this.dequeue(EVB.pwrx);
        if (pwre) {
          this.event = pwre;
          return true;
        }
        const ev = newEvent('pwrx');
        Object.assign(ev, { last: p.last, deepest: p.deepest, interrupt: p.interrupt, store: p.store });
        ev.autonomous = p.autonomous;
        return this.standalone(ev);
      }
      case 'ptw': {
        if (p.plc > 1) throw new PtDecodeError('bad_packet');
        const ev = p.ipBit ? this.enqueue(EVB.fupBound, 'ptwrite') : newEvent('ptwrite');
        ev.payload = p.payload;
        if (p.ipBit) return false;
        ev.ipSuppressed = true;
        return this.standalone(ev);
      }
      case 'trig':
        return this.decodeTrig(p.trbv, p.ipBit, p.mult, p.icntv, p.icnt);
      case 'tsc':
        timeCheck(this.tcal.updateTsc(p.tsc));
        timeCheck(this.time.updateTsc(p.tsc));
        return false;
      case 'tma':
        timeCheck(this.time.updateTma(p.ctc, p.fc, this.o.timing));
        return false;
      case 'mtc':
        timeCheck(this.tcal.updateMtc(p.ctc, this.o.timing));
        timeCheck(this.time.updateMtc(p.ctc, this.o.timing));
        return false;
      case 'cyc': {
        // pt_evt_apply_cyc: the calibration counts the cycles first
        this.tcal.updateCyc(p.value);
        const fcr = this.tcal.queryFcr();
        timeCheck(this.time.updateCyc(p.value, this.o.timing, fcr === 'no_time' ? 0n : fcr));
        return false;
      }
      case 'cfe':
        return decodeCfe(this, p.type, p.ipBit, p.vector);
      case 'evd':
        return decodeEvd(this, p.type, p.payload);
      default:
        // block packets (BBP/BIP/BEP): not in libipt 2.3's event decoder; skipped
        return false;
    }
  }

  private decodeModeExec(csl: boolean, csd: boolean, iflag: boolean): void {
    let n = 0;
    if (!this.modeValid || this.csl !== csl || this.csd !== csd) {
      const ev = this.enqueue(EVB.tip | EVB.fupBound, 'exec_mode');
      ev.mode = execMode(csl, csd);
      this.csl = csl;
      this.csd = csd;
      n++;
    }
    if (this.o.iflags && (!this.modeValid || this.iflag !== iflag)) {
      const ev = this.enqueue(EVB.tip | EVB.fupBound, 'iflags');
      ev.iflag = iflag;
      this.iflag = iflag;
      n++;
    }
    if (!n) this.enqueue(EVB.tip | EVB.fupBound, 'ignore');
    this.modeValid = true;
  }

  private decodePipVmcs(pip: { cr3: bigint; nr: boolean } | undefined, base: bigint): boolean {
    if (this.find(EVB.tip, 'async_branch')) {
      if (pip) {
        const ev = this.enqueue(EVB.tip, 'async_paging');
        ev.cr3 = pip.cr3;
        ev.nr = pip.nr;
      } else {
        // VMCS is ordered before a PIP already queued for the same TIP
        const paging = this.find(EVB.tip, 'async_paging');
        const ev = this.enqueue(EVB.tip, 'async_vmcs');
        ev.base = base;
        if (paging) {
          const i = this.queue.findIndex((q) => q.ev === paging);
          const j = this.queue.length - 1;
          const a = this.queue[i];
          const b = this.queue[j];
          if (a && b) [a.ev, b.ev] = [b.ev, a.ev];
        }
      }
      return false;
    }
    const ev = newEvent(pip ? 'paging' : 'vmcs');
    if (pip) {
      ev.cr3 = pip.cr3;
      ev.nr = pip.nr;
    } else ev.base = base;
    return this.standalone(ev);
  }

  private decodeExstop(ipBit: boolean): boolean {
    const mw = this.dequeue(EVB.exstop);
    if (mw) {
      if (!ipBit) {
        // both standalone: MWAIT now, EXSTOP on the next call (the packet stays current)
        mw.ipSuppressed = true;
        this.stamp(mw);
        this.event = mw;
        return true;
      }
      this.queue.push({ bind: EVB.fupBound, ev: mw });
    }
    if (ipBit) {
      this.enqueue(EVB.fupBound, 'exstop');
      return false;
    }
    const ev = newEvent('exstop');
    ev.ipSuppressed = true;
    return this.standalone(ev);
  }

  private decodeTrig(trbv: number, ipBit: boolean, mult: boolean, icntv: boolean, icnt: number): boolean {
    if (ipBit) {
      if (!icntv || icnt) throw new PtDecodeError('bad_packet');
      const ev = this.enqueue(EVB.fupBound, 'trig');
      ev.trbv = trbv;
      ev.mult = mult;
      return false;
    }
    const ev = newEvent('trig');
    ev.trbv = trbv;
    ev.mult = mult;
    if (icntv) {
      if (icnt && !this.enabled) throw new PtDecodeError('bad_packet');
      ev.icnt = icnt;
    } else {
      ev.icnt = 0;
      ev.ipSuppressed = true;
    }
    return this.standalone(ev);
  }

  /** A copy of the packet position for searching ahead. */
  lookahead(): Lookahead {
    return new Lookahead(this.bytes, this.cursor.pos);
  }

  decodePsbend(): boolean {
    const ev = this.dequeue(EVB.psbend);
    if (!ev) return false;
    this.event = ev;
    switch (ev.type) {
      case 'enabled':
      case 'exec_mode':
      case 'iflags':
      case 'tsx':
      case 'async_paging':
      case 'async_vmcs':
        this.setIp(ev);
        break;
      case 'disabled':
      case 'cbr':
      case 'mnt':
        break;
      default:
        throw new PtDecodeError('bad_context');
    }
    this.stamp(ev);
    return true;
  }

  /** Continue decoding at a packet found ahead (its successor is read next). */
  resumeAt(pos: number, packet: Packet): void {
    this.cursor.pos = pos;
    this.packet = packet;
  }

  /** A packet position for searching ahead from `pos`. */
  lookaheadAt(pos: number): Lookahead {
    return new Lookahead(this.bytes, pos);
  }

  /** SKD010: the MODE.TSX seen before the FUP where decoding resumes binds to that FUP. */
  queueTsxForFup(intx: boolean, abrt: boolean): void {
    const ev = this.enqueue(EVB.fupBound, 'tsx');
    ev.speculative = intx;
    ev.aborted = abrt;
  }
}
