/**
 * The text of libipt's `ptxed --no-inst` (ptxed.c print_insn, print_event,
 * diagnose): one 16-digit address per instruction (`? ` before speculative
 * ones), events in brackets, `[offset, ip: error: text]` on errors. With
 * `--event:ip` events carry their IP, with `--event:time` their TSC.
 */
import type { PtEvent } from '../intelpt/ptxed/event-types.js';
import { PTXED_ERRSTR } from '../intelpt/ptxed/event-types.js';
import type { PtxedSink } from '../intelpt/ptxed/insn-walk.js';

export interface PtxedTextOptions {
  eventIp?: boolean;
  eventTime?: boolean;
  /** The decoder's time before each instruction (ptxed --time). */
  time?: boolean;
  /** The trace offset before each instruction and event (ptxed --offset). */
  offset?: boolean;
  /** Errors only (ptxed --quiet). */
  quiet?: boolean;
}

const h16 = (v: bigint): string => v.toString(16).padStart(16, '0');
const hx = (v: bigint | number): string => v.toString(16);
const spec = (speculative: boolean, ip: bigint): string => (speculative ? `? ${h16(ip)}` : h16(ip));

/** The text inside the brackets of ptxed's print_event. */
export function ptxedEventText(ev: PtEvent, o: PtxedTextOptions): string {
  const ip = o.eventIp && !ev.ipSuppressed ? `, ip: ${h16(ev.ip)}` : '';
  switch (ev.type) {
    case 'enabled':
      return `${ev.resumed ? 'resumed' : 'enabled'}${o.eventIp ? `, ip: ${h16(ev.ip)}` : ''}`;
    case 'disabled':
      return `disabled${ip}`;
    case 'async_disabled':
      return `disabled${o.eventIp ? `, at: ${h16(ev.from)}${ip}` : ''}`;
    case 'async_branch':
      return `interrupt${o.eventIp ? `, from: ${h16(ev.from)}${ev.ipSuppressed ? '' : `, to: ${h16(ev.ip)}`}` : ''}`;
    case 'paging':
      return `paging, cr3: ${h16(ev.cr3 ?? 0n)}${ev.nr ? ', nr' : ''}`;
    case 'async_paging':
      return `paging, cr3: ${h16(ev.cr3 ?? 0n)}${ev.nr ? ', nr' : ''}${o.eventIp ? `, ip: ${h16(ev.ip)}` : ''}`;
    case 'overflow':
      return `overflow${ip}`;
    case 'exec_mode':
      return `exec mode: ${ev.mode === 'unknown' ? '<unknown>' : ev.mode}${ip}`;
    case 'tsx':
      return `${ev.aborted ? 'aborted' : ev.speculative ? 'begin transaction' : 'committed'}${ip}`;
    case 'stop':
      return 'stopped';
    case 'vmcs':
      return `vmcs, base: ${h16(ev.base ?? 0n)}`;
    case 'async_vmcs':
      return `vmcs, base: ${h16(ev.base ?? 0n)}${o.eventIp ? `, ip: ${h16(ev.ip)}` : ''}`;
    case 'exstop':
      return `exstop${ip}`;
    case 'mwait':
      return `mwait ${hx(ev.hints ?? 0)} ${hx(ev.ext ?? 0)}${ip}`;
    case 'pwre':
      return `pwre c${((ev.state ?? 0) + 1) & 0xf}.${((ev.subState ?? 0) + 1) & 0xf}${ev.hw ? ' hw' : ''}`;
    case 'pwrx': {
      const why = `${ev.interrupt ? 'int: ' : ''}${ev.store ? 'st: ' : ''}${ev.autonomous ? 'hw: ' : ''}`;
      return `pwrx ${why}c${((ev.last ?? 0) + 1) & 0xf} (c${((ev.deepest ?? 0) + 1) & 0xf})`;
    }
    case 'ptwrite':
      return `ptwrite: ${hx(ev.payload ?? 0n)}${ip}`;
    case 'tick':
      return `tick${ip}`;
    case 'cbr':
      return `cbr: ${hx(ev.ratio ?? 0)}`;
    case 'mnt':
      return `mnt: ${hx(ev.payload ?? 0n)}`;
    case 'tip':
      return `tip: ${hx(ev.ip)}`;
    case 'tnt':
      return `tnt: ${tntText(ev.bits ?? 0, ev.size ?? 0)}`;
    case 'iflags':
      return `interrupts ${ev.iflag ? 'enabled' : 'disabled'}${ip}`;
    case 'trig':
      return `trig ${hx(ev.trbv ?? 0).padStart(2, '0')}${ev.mult ? ', mult' : ''}${ip}${icnt(ev.icnt)}`;
    case 'interrupt':
      return `interrupt ${ev.vector ?? 0}${ev.cr2 !== undefined ? `, cr2: ${h16(ev.cr2)}` : ''}${ip}`;
    case 'sipi':
      return `sipi: ${hx(ev.vector ?? 0)}`;
    case 'vmexit': {
      const intr = ev.hasVector ? `, intr: ${ev.vector ?? 0}` : '';
      const r = ev.vmxr !== undefined ? `, vmxr: ${h16(ev.vmxr)}` : '';
      return `vmexit${intr}${r}${ev.vmxq !== undefined ? `, vmxq: ${h16(ev.vmxq)}` : ''}${ip}`;
    }
    case 'uintr':
    case 'swintr':
      return `${ev.type} ${ev.vector ?? 0}${ip}`;
    case 'iret':
    case 'smi':
    case 'rsm':
    case 'init':
    case 'vmentry':
    case 'shutdown':
    case 'uiret':
    case 'syscall':
      return `${ev.type}${ip}`;
    case 'ignore':
      return 'ignore';
  }
}

const icnt = (n: number | undefined): string => (n ? `, icnt: ${n}` : '');

function tntText(bits: number, size: number): string {
  let s = '';
  for (let i = size - 1; i >= 0; i--) s += Math.floor(bits / 2 ** i) % 2 ? '!' : '.';
  return s;
}

/** A PtxedSink writing ptxed's lines through `line`. */
export function ptxedTextSink(line: (s: string) => void, o: PtxedTextOptions = {}): PtxedSink {
  const error = (offset: number, ip: bigint, code: keyof typeof PTXED_ERRSTR, kind: string): void =>
    line(`[${hx(offset)}, ${hx(ip)}: ${kind}: ${PTXED_ERRSTR[code]}]`);
  if (o.quiet) return { insn: () => {}, event: () => {}, error };
  return {
    insn: (ip, speculative, _insn, time, at) => {
      const off = o.offset ? `${h16(BigInt(at?.offset ?? 0))}  ` : '';
      line(`${off}${o.time ? `${h16(time)}  ` : ''}${spec(speculative, ip)}`);
    },
    event: (ev, offset) => {
      const off = o.offset && offset !== undefined ? `${h16(BigInt(offset))}  ` : '';
      const time = o.eventTime && ev.tsc !== undefined ? `${h16(ev.tsc)}  ` : '';
      line(`[${off}${time}${ptxedEventText(ev, o)}]`);
    },
    error,
    end: () => line('[end of trace]'),
  };
}
