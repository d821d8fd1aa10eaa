/**
 * Event tracing packets (libipt 2.3 pt_evt_decode_cfe/evd): CFE says what
 * changed the flow (interrupt, IRET, SMI, RSM, SIPI, INIT, VM entry/exit,
 * shutdown, user interrupts), EVD carries its data (CR2 of a page fault,
 * VMX exit reason and qualification) and comes first. A CFE with its IP bit
 * binds to the next FUP; without it, while tracing is on, some bind to the
 * next FUP all the same (their IP is where the flow was interrupted);
 * otherwise they stand alone.
 */
import { PtDecodeError, newEvent, type PtEvent, type PtEventType } from './event-types.js';
import { EVB, type EventDecoderState } from './event-state.js';

/** CFE types (libipt enum pt_cfe_type) and what binds them. */
const CFE: Record<number, { type: PtEventType; vector?: boolean; whenEnabled: boolean; noIp?: boolean }> = {
  1: { type: 'interrupt', vector: true, whenEnabled: true },
  2: { type: 'iret', whenEnabled: false },
  3: { type: 'smi', whenEnabled: true },
  4: { type: 'rsm', whenEnabled: true, noIp: true },
  5: { type: 'sipi', vector: true, whenEnabled: true, noIp: true },
  6: { type: 'init', whenEnabled: true },
  7: { type: 'vmentry', whenEnabled: false },
  8: { type: 'vmexit', whenEnabled: true },
  9: { type: 'vmexit', vector: true, whenEnabled: true },
  10: { type: 'shutdown', whenEnabled: false },
  // (11 is not a type ptxed 2.3 reports)
  12: { type: 'uintr', vector: true, whenEnabled: true },
  13: { type: 'uiret', whenEnabled: false },
  14: { type: 'swintr', vector: true, whenEnabled: true },
  15: { type: 'syscall', whenEnabled: true },
};

/** A CFE packet: false when its event waits for a FUP, true when published. */
export function decodeCfe(dec: EventDecoderState, type: number, ipBit: boolean, vector: number): boolean {
  // an EVD may have prepared the event (interrupt with CR2, VM exit with its reason)
  const prepared = dec.dequeue(EVB.cfe);
  const k = CFE[type];
  if (!k) {
    if (prepared) throw new PtDecodeError('internal');
    // unknown types are skipped, with the FUP they would consume
    if (ipBit) dec.enqueue(EVB.fupBound, 'ignore');
    return false;
  }
  if (prepared && prepared.type !== k.type) throw new PtDecodeError('bad_context');
  const ev: PtEvent = prepared ?? newEvent(k.type);
  if (k.vector) {
    ev.vector = vector;
    if (k.type === 'vmexit') ev.hasVector = true;
  }
  if (ipBit) {
    if (k.noIp) throw new PtDecodeError('bad_packet');
    dec.queue.push({ bind: EVB.fupBound, ev });
    return false;
  }
  if (dec.enabled && k.whenEnabled) {
    if (k.noIp) ev.ipSuppressed = true;
    dec.queue.push({ bind: EVB.fup, ev });
    return false;
  }
  ev.ipSuppressed = true;
  return dec.standalone(ev);
}

/** An EVD packet: data for the CFE that follows. */
export function decodeEvd(dec: EventDecoderState, type: number, payload: bigint): boolean {
  const ev = dec.queue.find((q) => q.bind === EVB.cfe)?.ev;
  switch (type) {
    case 0: {
      if (ev) throw new PtDecodeError('bad_context');
      const i = dec.enqueue(EVB.cfe, 'interrupt');
      i.cr2 = payload;
      return false;
    }
    case 1:
    case 2: {
      const x = ev ?? dec.enqueue(EVB.cfe, 'vmexit');
      if (x.type !== 'vmexit') throw new PtDecodeError('bad_context');
      if (type === 1) {
        if (x.vmxq !== undefined) throw new PtDecodeError('bad_context');
        x.vmxq = payload;
      } else {
        if (x.vmxr !== undefined) throw new PtDecodeError('bad_context');
        x.vmxr = payload;
      }
      return false;
    }
    default:
      return false; // unknown EVD types are skipped
  }
}
