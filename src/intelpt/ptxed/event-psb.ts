/**
 * PSB+ (libipt 2.3 pt_evt_decode_psb): the packets between PSB and PSBEND
 * give the current state. They make status-update events (not printed by
 * ptxed) bound to PSBEND: tracing enabled (a FUP) or disabled, exec mode,
 * TSX state, paging and VMCS, CBR; MODE.Exec must agree with what the
 * decoder already knows. With BDM70, a PSB+ FUP followed by TIP.PGE does not
 * mean tracing is on.
 */
import { PtDecodeError } from './event-types.js';
import { EVB, type EventDecoderState } from './event-state.js';
import { BDM70_SKIP, execMode, timeCheck } from './event-support.js';

export function decodePsbHeader(dec: EventDecoderState): void {
  // a PWRE without its PWRX is dropped
  dec.queue = dec.queue.filter((q) => q.bind !== EVB.pwrx);
  if (dec.queue.length) throw new PtDecodeError('bad_context');
  dec.ip.reset();
  dec.enabled = false;
  dec.tcal.updatePsb(dec.o.timing);
  const first = dec.enqueue(EVB.psbend, 'enabled');
  first.statusUpdate = true;
  for (;;) {
    dec.fetchPacket();
    const p = dec.packet;
    switch (p.kind) {
      case 'fup': {
        let on = p.ipc !== 0;
        if (dec.o.errata.bdm70 && bdm70Applies(dec)) on = false;
        dec.enabled = on;
        if (on) dec.updateIp(p);
        break;
      }
      case 'mode.exec': {
        if (dec.modeValid) {
          if ((dec.o.iflags && dec.iflag !== p.iflag) || dec.csd !== p.csd || dec.csl !== p.csl)
            throw new PtDecodeError('bad_status_update');
        } else {
          dec.modeValid = true;
          dec.iflag = p.iflag;
          dec.csd = p.csd;
          dec.csl = p.csl;
        }
        const ev = dec.enqueue(EVB.psbend, 'exec_mode');
        ev.statusUpdate = true;
        ev.mode = execMode(p.csl, p.csd);
        if (dec.o.iflags) {
          const f = dec.enqueue(EVB.psbend, 'iflags');
          f.statusUpdate = true;
          f.iflag = p.iflag;
        }
        break;
      }
      case 'mode.tsx': {
        const ev = dec.enqueue(EVB.psbend, 'tsx');
        ev.statusUpdate = true;
        ev.speculative = p.intx;
        ev.aborted = p.abrt;
        break;
      }
      case 'pip': {
        const ev = dec.enqueue(EVB.psbend, 'async_paging');
        ev.statusUpdate = true;
        ev.cr3 = p.cr3;
        ev.nr = p.nr;
        break;
      }
      case 'vmcs': {
        const ev = dec.enqueue(EVB.psbend, 'async_vmcs');
        ev.statusUpdate = true;
        ev.base = p.base;
        break;
      }
      case 'mnt': {
        const ev = dec.enqueue(EVB.psbend, 'mnt');
        ev.payload = p.payload;
        break;
      }
      case 'tsc':
        timeCheck(dec.tcal.headerTsc(p.tsc));
        timeCheck(dec.time.updateTsc(p.tsc));
        break;
      case 'cbr': {
        timeCheck(dec.tcal.headerCbr(p.ratio, dec.o.timing));
        timeCheck(dec.time.updateCbr(p.ratio));
        const ev = dec.enqueue(EVB.psbend, 'cbr');
        ev.statusUpdate = true;
        ev.ratio = p.ratio;
        break;
      }
      case 'tma':
        timeCheck(dec.time.updateTma(p.ctc, p.fc, dec.o.timing));
        break;
      case 'mtc':
        timeCheck(dec.tcal.updateMtc(p.ctc, dec.o.timing));
        timeCheck(dec.time.updateMtc(p.ctc, dec.o.timing));
        break;
      case 'cyc': {
        dec.tcal.updateCyc(p.value);
        const fcr = dec.tcal.queryFcr();
        timeCheck(dec.time.updateCyc(p.value, dec.o.timing, fcr === 'no_time' ? 0n : fcr));
        break;
      }
      case 'psbend':
        if (dec.enabled) first.type = 'enabled';
        else {
          first.type = 'disabled';
          first.ipSuppressed = true;
        }
        return;
      case 'ovf':
        if (dec.enabled) first.type = 'enabled';
        else dec.dequeue(EVB.psbend);
        return;
      case 'invalid':
        throw p.error;
      default:
        throw new PtDecodeError('bad_context');
    }
  }
}

/** BDM70: a FUP in PSB+ followed by TIP.PGE (only skippable packets between) does not mean tracing is on. */
function bdm70Applies(dec: EventDecoderState): boolean {
  const c = dec.lookahead();
  for (;;) {
    const p = c.nextPacket();
    if (!p) return false;
    if (p.kind === 'tip.pge') return true;
    if (!BDM70_SKIP.has(p.kind)) return false;
  }
}
