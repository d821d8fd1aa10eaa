/**
 * Where decoding resumes after an OVF (libipt 2.3 pt_evt_decode_ovf and its
 * errata handlers): at the FUP that ends the overflow (tracing stayed on),
 * else standalone (tracing was off when it resolved). With SKD010 a lost
 * FUP is looked for further on (a FUP, a TIP, a PSB+ with FUP); with APL11
 * a spurious TIP.PGD is skipped; with APL12 a FUP followed by signs that
 * tracing is off is skipped.
 */
import type { IpPacket, Packet } from '../packets/packet.js';
import { newEvent, PtDecodeError, type PtEvent } from './event-types.js';
import { EVB, type EventDecoderState } from './event-state.js';
import type { Lookahead } from './event-support.js';
import { TimeCalibration } from '../timing.js';

export interface OvfRecovery {
  dec: EventDecoderState;
  /** Publish `ev` as the overflow event, resuming at `resume` (when given) with tracing on at `ip` (when given). */
  publish(ev: PtEvent, resume?: { pos: number; packet: Packet }, ip?: IpPacket): true;
}

/** pt_evt_find_ovf_fup: bytes to just after the FUP ending the overflow, 0 when tracing is off, or an error. */
export function findOvfFup(at: Lookahead): {
  offset: number;
  error?: 'bad_context' | 'eos' | 'bad_opc' | 'bad_packet';
} {
  const start = at.pos;
  for (;;) {
    const p = at.nextPacket();
    if (!p) return { offset: 0, error: at.error };
    switch (p.kind) {
      case 'fup':
        return { offset: at.pos - start };
      case 'pad':
      case 'mnt':
      case 'cbr':
      case 'tsc':
      case 'tma':
      case 'mtc':
      case 'cyc':
        break;
      case 'psbend':
      case 'tip':
      case 'tip.pgd':
      case 'tnt.8':
      case 'tnt.64':
        return { offset: 0, error: 'bad_context' };
      default:
        return { offset: 0 };
    }
  }
}

/** The FUP of the PSB+ starting at `at` (after the PSB): the packet, null when there is none, undefined on error. */
function headerFup(at: Lookahead): IpPacket | null | undefined {
  for (;;) {
    const p = at.nextPacket();
    if (!p) return undefined;
    switch (p.kind) {
      case 'fup':
        return p;
      case 'psbend':
      case 'ovf':
        return null;
      case 'mode.exec':
      case 'mode.tsx':
      case 'pip':
      case 'vmcs':
      case 'mnt':
      case 'tsc':
      case 'cbr':
      case 'tma':
      case 'mtc':
      case 'cyc':
      case 'pad':
        break;
      default:
        return undefined;
    }
  }
}

/** SKD010: true when the overflow was handled (an event published). */
export function handleSkd010(r: OvfRecovery): boolean {
  const at = r.dec.lookahead();
  let tsx: { intx: boolean; abrt: boolean } | undefined;
  for (;;) {
    const p = at.nextPacket();
    if (!p) return false;
    switch (p.kind) {
      case 'tip.pge':
        return false;
      case 'tip.pgd':
        r.publish(newEvent('overflow'), { pos: at.pos, packet: p });
        r.dec.fetchPacket();
        return true;
      case 'tnt.8':
      case 'tnt.64':
        return false;
      case 'mode.tsx':
        if (tsx) return false;
        tsx = { intx: p.intx, abrt: p.abrt };
        break;
      case 'fup':
        if (tsx) r.dec.queueTsxForFup(tsx.intx, tsx.abrt);
        return r.publish(newEvent('overflow'), { pos: at.pos, packet: p }, p);
      case 'tip':
        r.publish(newEvent('overflow'), { pos: at.pos, packet: p }, p);
        r.dec.fetchPacket();
        return true;
      case 'psb': {
        const fup = headerFup(r.dec.lookaheadAt(at.pos));
        if (!fup) return false;
        return r.publish(newEvent('overflow'), { pos: at.pos, packet: p }, fup);
      }
      case 'psbend':
        return false;
      case 'ovf':
      case 'stop':
        return false;
      case 'exstop':
        if (p.ipBit) return false;
        break;
      case 'ptw':
        if (p.ipBit) return false;
        break;
      case 'mwait':
        return false;
      default:
        break; // PIP, VMCS, MODE.Exec, timing, power packets: skipped
    }
  }
}

/** APL11: a TIP.PGD after the OVF means tracing was already off; resume after it. */
export function handleApl11(r: OvfRecovery): boolean {
  const at = r.dec.lookahead();
  for (;;) {
    const p = at.nextPacket();
    if (!p) return false;
    switch (p.kind) {
      case 'tip.pgd':
        r.publish(newEvent('overflow'), { pos: at.pos, packet: p });
        r.dec.fetchPacket();
        return true;
      case 'tsc':
      case 'cbr':
      case 'tma':
      case 'mtc':
      case 'cyc':
      case 'pad':
      case 'mnt':
      case 'cfe':
      case 'evd':
      case 'trig':
        break;
      default:
        return false;
    }
  }
}

/** APL12: a FUP after the OVF although tracing is off (a later TIP.PGE, STOP or PSB+ without FUP says so). */
export function handleApl12(r: OvfRecovery, offset: number): boolean {
  const at = r.dec.lookaheadAt(r.dec.cursor.pos + offset);
  for (;;) {
    const p = at.nextPacket();
    if (!p) return false;
    switch (p.kind) {
      case 'tnt.8':
      case 'tnt.64':
      case 'tip':
      case 'tip.pgd':
      case 'psbend':
      case 'ovf':
        return false;
      case 'psb': {
        const fup = headerFup(r.dec.lookaheadAt(at.pos));
        if (fup !== null) return false;
        return resumeAfter(r, offset);
      }
      case 'stop':
      case 'tip.pge':
        return resumeAfter(r, offset);
      default:
        break;
    }
  }
}

/** pt_evt_recover_ovf_at_offset: skip to `offset` bytes on (after the FUP), tracing off. */
function resumeAfter(r: OvfRecovery, offset: number): true {
  const at = r.dec.lookahead();
  const end = at.pos + offset;
  let last: Packet | undefined;
  while (at.pos < end) {
    const p = at.nextPacket();
    if (!p) break;
    last = p;
  }
  if (last) r.publish(newEvent('overflow'), { pos: at.pos, packet: last });
  r.dec.fetchPacket();
  return true;
}

/** pt_evt_decode_ovf: true when an event was published, false when the OVF waits for its FUP. */
export function decodeOvf(dec: EventDecoderState): boolean {
  // an OVF ends a PSB+ as PSBEND does: publish what PSB+ queued first
  if (dec.decodePsbend()) return true;
  dec.queue = [];
  dec.ip.reset();
  dec.enabled = false;
  dec.bound = false;
  dec.modeValid = false;
  // timing is kept; the calibration restarts, or keeps its ratio (ptxed --insn:/--block:keep-tcal-on-ovf)
  if (dec.o.keepTcalOnOvf) dec.tcal.updateOvf();
  else dec.tcal = new TimeCalibration();
  const at = dec.lookahead();
  const fup = findOvfFup(at);
  const rec: OvfRecovery = {
    dec,
    publish: (ev, resume, ip) => {
      ev.type = 'overflow';
      dec.stamp(ev);
      if (ip) {
        dec.updateIp(ip);
        dec.enabled = true;
        dec.setIp(ev);
      } else ev.ipSuppressed = true;
      dec.event = ev;
      if (resume) dec.resumeAt(resume.pos, resume.packet);
      return true;
    },
  };
  if (fup.offset <= 0) {
    if (dec.o.errata.skd010) {
      const r = handleSkd010(rec);
      if (r) return true;
    }
    if (dec.o.errata.apl11 && fup.error === 'bad_context') {
      const r = handleApl11(rec);
      if (r) return true;
    }
    if (fup.error && fup.error !== 'eos') throw new PtDecodeError(fup.error);
    const ev = newEvent('overflow');
    ev.ipSuppressed = true;
    return dec.standalone(ev);
  }
  if (dec.o.errata.apl12 && handleApl12(rec, fup.offset)) return true;
  const ev = dec.enqueue(EVB.fupBound, 'overflow');
  dec.stamp(ev);
  return false;
}
