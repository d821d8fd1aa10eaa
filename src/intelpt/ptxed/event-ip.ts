/**
 * The IP packets (libipt 2.3 pt_evt_decode_fup/tip/tip_pge/tip_pgd): a FUP
 * completes the events bound to it (overflow, TSX, EXSTOP, MWAIT, PTWRITE,
 * TRIG) or starts an asynchronous branch; a TIP gives an indirect branch
 * target or completes that asynchronous branch (and the MODE.Exec, PIP and
 * VMCS bound to it); TIP.PGE enables tracing, TIP.PGD disables it (an
 * asynchronous disable when a FUP came first).
 */
import type { IpPacket } from '../packets/packet.js';
import { PtDecodeError, newEvent } from './event-types.js';
import { EVB, type EventDecoderState } from './event-state.js';

export function decodeFup(dec: EventDecoderState, p: IpPacket): boolean {
  dec.updateIp(p);
  if (dec.pending(EVB.fupBound)) dec.bound = true;
  const ev = dec.dequeue(EVB.fup | EVB.fupBound);
  if (!ev) {
    if (dec.bound) return false;
    if (!dec.ip.haveIp || dec.ip.suppressed) throw new PtDecodeError('noip');
    const ab = dec.enqueue(EVB.tip, 'async_branch');
    ab.from = dec.ip.ip;
    return false;
  }
  if (ev.type === 'ignore') return decodeFup(dec, p);
  dec.event = ev;
  if (ev.type === 'overflow') dec.enabled = true;
  else dec.stamp(ev);
  // RSM and SIPI bind to a FUP without taking its IP
  if (ev.type !== 'rsm' && ev.type !== 'sipi') dec.setIp(ev);
  return true;
}

export function decodeTip(dec: EventDecoderState, p: IpPacket): boolean {
  if (!dec.enabled) throw new PtDecodeError('bad_context');
  dec.updateIp(p);
  if (!dec.bound) {
    dec.bound = true;
    const async = dec.find(EVB.tip, 'async_branch');
    if (async) {
      const first = dec.dequeue(EVB.tip);
      if (!first) throw new PtDecodeError('internal');
      let ev = first;
      if (first !== async) {
        // the asynchronous branch goes first; the event it displaced takes its queue slot
        const q = dec.queue.find((x) => x.ev === async);
        if (q) q.ev = first;
        ev = async;
      }
      dec.event = ev;
      dec.setIp(ev);
      dec.stamp(ev);
      return true;
    }
    const ev = newEvent('tip');
    dec.setIp(ev);
    dec.stamp(ev);
    dec.event = ev;
    return true;
  }
  const ev = dec.dequeue(EVB.tip);
  if (!ev) return false;
  if (ev.type === 'ignore') return decodeTip(dec, p);
  if (ev.type === 'async_branch') throw new PtDecodeError('internal');
  if (!['exec_mode', 'async_paging', 'async_vmcs', 'iflags'].includes(ev.type)) throw new PtDecodeError('bad_context');
  dec.event = ev;
  dec.setIp(ev);
  dec.stamp(ev);
  return true;
}

export function decodeTipPge(dec: EventDecoderState, p: IpPacket): boolean {
  dec.updateIp(p);
  if (!dec.bound) {
    const ev = newEvent('enabled');
    dec.setIp(ev);
    dec.enabled = true;
    dec.bound = true;
    dec.stamp(ev);
    dec.event = ev;
    return true;
  }
  const ev = dec.dequeue(EVB.tip);
  if (!ev) return false;
  if (ev.type === 'ignore') return decodeTipPge(dec, p);
  if (ev.type !== 'exec_mode' && ev.type !== 'iflags') throw new PtDecodeError('bad_context');
  dec.event = ev;
  dec.setIp(ev);
  dec.stamp(ev);
  return true;
}

export function decodeTipPgd(dec: EventDecoderState, p: IpPacket): boolean {
  dec.updateIp(p);
  const ev = dec.dequeue(EVB.tip);
  if (!ev) {
    if (dec.bound) return false;
    const d = newEvent('disabled');
    dec.setIp(d);
    dec.enabled = false;
    return dec.standalone(d);
  }
  dec.event = ev;
  switch (ev.type) {
    case 'async_branch':
      ev.type = 'async_disabled';
      dec.setIp(ev);
      dec.enabled = false;
      dec.bound = true;
      break;
    case 'async_paging':
    case 'async_vmcs':
      if (!dec.bound) throw new PtDecodeError('internal');
      ev.ipSuppressed = true;
      break;
    case 'exec_mode':
      // (libipt 2.3 has no case for an iflags event here: it is a bad context)
      ev.ipSuppressed = true;
      break;
    case 'ignore':
      dec.event = undefined;
      return decodeTipPgd(dec, p);
    default:
      throw new PtDecodeError('bad_context');
  }
  dec.stamp(ev);
  return true;
}
