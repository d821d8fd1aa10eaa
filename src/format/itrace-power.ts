/**
 * perf 6.1's text for the power-event samples of `--itrace=p` (builtin-script.c
 * perf_sample__fprintf_synth_*: psb, cbr, mwait, pwre, exstop, pwrx), each
 * padded to perf's 34-column synth width (perf_sample__fprintf_pt_spacing).
 */
import type { PowerEvent } from '../intelpt/flow/flow-types.js';
import type { CbrScale } from '../intelpt/flow/time-conv.js';

const hex = (v: number | bigint): string => (v ? `0x${v.toString(16)}` : '0');
const u = (v: number, w: number): string => String(v).padStart(w);

/** The sample's synth text (leading space included) and perf's padding to 34 columns. */
export function powerSynthText(e: PowerEvent, scale: CbrScale): string {
  let s: string;
  switch (e.kind) {
    case 'psb':
      s = ` psb offs: ${hex(e.offset)}`;
      break;
    case 'cbr': {
      // raw.freq is a u32 of cbr * cbr2khz; perf prints it in MHz, rounded
      const khz = (e.cbr * scale.cbr2khz) >>> 0;
      s = ` cbr: ${u(e.cbr, 2)} freq: ${u(Math.floor((khz + 500) / 1000), 4)} MHz `;
      const m = scale.maxNonTurbo & 0xff;
      if (m) s += `(${u(Math.floor((5 + Math.floor((1000 * e.cbr) / m)) / 10), 3)}%) `;
      break;
    }
    case 'mwait':
      s = ` hints: ${hex(e.hints)} extensions: ${hex(e.ext)} `;
      break;
    case 'pwre':
      s = ` hw: ${e.hw ? 1 : 0} cstate: ${e.cstate} sub-cstate: ${e.subcstate} `;
      break;
    case 'exstop':
      s = ` IP: ${e.ipBit ? 1 : 0} `;
      break;
    case 'pwrx':
      s = ` deepest cstate: ${e.deepest} last cstate: ${e.last} wake reason: ${hex(e.wake)} `;
      break;
  }
  return s.length < 34 ? s.padEnd(34) : s;
}
