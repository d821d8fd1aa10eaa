import { toPacket, type Packet } from '../intelpt/packets/packet.js';
import { PacketCursor } from '../intelpt/packets/cursor.js';
import { PT } from '../intelpt/packets/kinds.js';
import { ERR_BAD_OPCODE, NEED_MORE_BYTES, type PacketDialect } from '../intelpt/packets/raw-decode.js';
import { cpuErrata, NO_ERRATA, type Cpu } from '../intelpt/cpu.js';
import { diag, fit, PtdumpTracking, type PtdumpBuffer } from './ptdump-tracking.js';

/**
 * The text of Intel's libipt 2.3 `ptdump` with its options, after ptdump.c's
 * print_packet(), print_buffer(), dump_packets() and dump_sync(): a 16-digit
 * hex offset padded to 17 columns, optionally the raw bytes (33 columns), the
 * mnemonic padded to 10 columns when a payload follows, the payload, and the
 * tracking column (`cr3`, `vmcs`, `ip`, `em`, `tsc`, `fcr`: payload padded to
 * 25, id to 5). Diagnostics print as `[offset: what: libipt error text]`
 * before the packet's line; a decode error resyncs at the next PSB (bytes
 * before the first PSB are skipped unless noSync) and resets the tracking.
 */

/** ptdump's options (its flags, spelled as camelCase), all off by default. */
export interface PtdumpOptions {
  noSync?: boolean;
  quiet?: boolean;
  noPad?: boolean;
  noTiming?: boolean;
  noCyc?: boolean;
  noOffset?: boolean;
  /** ptdump --raw: the packet's bytes in hex. */
  rawBytes?: boolean;
  lastIp?: boolean;
  execMode?: boolean;
  time?: boolean;
  tcal?: boolean;
  timeDelta?: boolean;
  noTcal?: boolean;
  noWallClock?: boolean;
  keepTcalOnOvf?: boolean;
  /** --cpu f/m[/s]: enables the errata libipt knows for that model (undefined: none). */
  cpu?: Cpu;
  mtcFreq?: number;
  nomFreq?: number;
  cpuid15Eax?: number;
  cpuid15Ebx?: number;
  /** Packet rules (default libipt-2.3, what ptdump 2.3 decodes). */
  dialect?: PacketDialect;
  /** Leave out the "failed to determine errata" line ptdump prints before the dump (printed once per run). */
  noPreamble?: boolean;
}

/** CFE types (SDM "Control Flow Event packet"). */
const CFE_INTR = 1;
const CFE_SIPI = 5;
const CFE_VMEXIT_INTR = 9;
const CFE_UINTR = 0xc;
const CFE_SWINTR = 0xe;
/** The names ptdump 2.3 prints in the tracking column (`type …`) of CFE and EVD packets. */
const CFE_NAMES = [
  '',
  'intr',
  'iret',
  'smi',
  'rsm',
  'sipi',
  'init',
  'vmentry',
  'vmexit',
  'vmexit_intr',
  'shutdown',
  '',
  'uintr',
  'uiret',
  'swintr',
  'syscall',
];
const EVD_NAMES = ['cr2', 'vmxq', 'vmxr'];

const h = (v: bigint | number, w = 0): string => v.toString(16).padStart(w, '0');

function sext48(v: bigint): bigint {
  return v & (1n << 47n) ? v | 0xffff000000000000n : v & 0xffffffffffffn;
}

function ipPayload(p: Extract<Packet, { ipc: number }>): string {
  const ip = p.ip ?? 0n;
  switch (p.ipc) {
    case 0:
      return '0: ????????????????';
    case 1:
      return `1: ????????????${h(ip, 4)}`;
    case 2:
      return `2: ????????${h(ip, 8)}`;
    case 4:
      return `4: ????${h(ip, 12)}`;
    case 3:
      return `3: ${h(sext48(ip), 16)}`;
    case 6:
      return `6: ${h(ip, 16)}`;
  }
}

/**
 * [mnemonic, payload] as ptdump prints them (the payload column, without the
 * tracking column). `iflags`: print MODE.Exec's IF bit, as libipt >= 2.1 does.
 */
export function ptdumpFields(p: Packet, iflags = true): [string, string] {
  switch (p.kind) {
    case 'pad':
    case 'psb':
    case 'psbend':
    case 'ovf':
    case 'stop':
      return [p.kind, ''];
    case 'fup':
    case 'tip':
    case 'tip.pge':
    case 'tip.pgd':
      return [p.kind, ipPayload(p)];
    case 'pip':
      return ['pip', `${h(p.cr3)}${p.nr ? ', nr' : ''}`];
    case 'vmcs':
      return ['vmcs', h(p.base)];
    case 'tnt.8':
    case 'tnt.64': {
      let s = '';
      for (let i = p.count - 1; i >= 0; i--) s += (p.bits >> BigInt(i)) & 1n ? '!' : '.';
      return [p.kind, s];
    }
    case 'mode.exec': {
      // libipt >= 2.1 adds the interrupt flag
      const csd = p.csd ? 'cs.d' : '';
      const csl = p.csl ? 'cs.l' : '';
      const iflag = p.iflag && iflags ? `${csd || csl ? ', ' : ''}if` : '';
      return ['mode.exec', csd + (csd && csl ? ', ' : '') + csl + iflag];
    }
    case 'mode.tsx': {
      const intx = p.intx ? 'intx' : '';
      const abrt = p.abrt ? 'abrt' : '';
      return ['mode.tsx', intx + (intx && abrt ? ', ' : '') + abrt];
    }
    case 'tsc':
      return ['tsc', h(p.tsc)];
    case 'cbr':
      return ['cbr', h(p.ratio)];
    case 'tma':
      return ['tma', `${h(p.ctc)}, ${h(p.fc)}`];
    case 'mtc':
      return ['mtc', h(p.ctc)];
    case 'cyc':
      return ['cyc', h(p.value)];
    case 'mnt':
      return ['mnt', h(p.payload)];
    case 'trig': {
      const flags = `${h(p.trbv, 2)}${p.ipBit ? ', ip' : ''}${p.mult ? ', mult' : ''}`;
      return ['trig', p.icntv ? `${flags}, icnt: ${p.icnt}` : flags];
    }
    case 'exstop':
      return ['exstop', p.ipBit ? 'ip' : ''];
    case 'mwait':
      return ['mwait', `${h(p.hints, 8)}, ${h(p.ext, 8)}`];
    case 'pwre':
      return ['pwre', `c${(p.state + 1) & 0xf}.${(p.subState + 1) & 0xf}${p.hw ? ', hw' : ''}`];
    case 'pwrx': {
      const n = (p.interrupt ? 1 : 0) + (p.store ? 1 : 0) + (p.autonomous ? 1 : 0);
      const wr = n !== 1 ? 'bad' : p.interrupt ? 'int' : p.store ? ' st' : ' hw';
      return ['pwrx', `${wr}: c${(p.last + 1) & 0xf}, c${(p.deepest + 1) & 0xf}`];
    }
    case 'ptw':
      return ['ptw', `${p.plc}: ${h(p.payload)}${p.ipBit ? ', ip' : ''}`];
    // CFE/EVD as libipt 2.3's ptdump prints them (vector decimal for
    // interrupts, hex for SIPI, absent for the other types; types decimal).
    case 'cfe': {
      const ip = p.ipBit ? ', ip' : '';
      if (p.type === CFE_INTR || p.type === CFE_VMEXIT_INTR || p.type === CFE_UINTR || p.type === CFE_SWINTR)
        return ['cfe', `${p.type}: ${p.vector}${ip}`];
      if (p.type === CFE_SIPI) return ['cfe', `${p.type}: ${h(p.vector)}${ip}`];
      return ['cfe', `${p.type}${ip}`];
    }
    case 'evd':
      return ['evd', `${p.type}: ${h(p.payload)}`];
    // No libipt release decodes BBP/BIP/BEP (PEBS via PT); perfpoke's own spelling.
    case 'bbp':
      return ['bbp', `${p.sz4 ? '4' : '8'}, ${h(p.type)}`];
    case 'bip':
      return ['bip', `${h(p.id)}: ${h(p.value)}`];
    case 'bep':
      return ['bep', p.ipBit ? 'ip' : ''];
  }
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** libipt pt_get_exec_mode as ptdump prints it (--exec-mode). */
function execModeName(p: Extract<Packet, { kind: 'mode.exec' }>): string {
  if (p.csl) return p.csd ? 'unknown' : '64-bit';
  return p.csd ? '32-bit' : '16-bit';
}

/** The line ptdump's print_buffer() writes, or undefined when it writes none. */
function bufferLine(b: PtdumpBuffer, offset: number, raw: string, o: PtdumpOptions): string | undefined {
  if (b.skip || o.quiet) return undefined;
  let line = '';
  let sep = '';
  if (!o.noOffset) {
    line += offset.toString(16).padStart(16, '0').padEnd(17);
    sep = ' ';
  }
  if (raw) {
    line += sep + raw.padEnd(33);
    sep = ' ';
  }
  line += sep + (b.payload ? b.opcode.padEnd(10) : b.opcode);
  if (b.trackId) line += ` ${b.payload.padEnd(25)} ${b.trackId.padEnd(5)}${b.trackPayload}`;
  else if (b.payload) line += ` ${b.payload}`;
  return line;
}

/** ptdump's print_packet(): fills the buffer and updates the tracking. */
function printPacket(b: PtdumpBuffer, p: Packet, t: PtdumpTracking, o: PtdumpOptions): void {
  const [op, payload] = ptdumpFields(p);
  b.opcode = op;
  // TNT and TRIG payloads go to ptdump's 48-byte extended field, the others to the 25-byte one
  b.payload = fit(payload, p.kind === 'tnt.8' || p.kind === 'tnt.64' || p.kind === 'trig' ? 48 : 25);
  const at = p.offset;
  switch (p.kind) {
    case 'psb':
      t.psb();
      return;
    case 'psbend':
      t.inHeader = false;
      return;
    case 'pad':
      b.skip = !!o.noPad;
      return;
    case 'ovf':
      t.ovf();
      return;
    case 'fup':
    case 'tip':
    case 'tip.pge':
    case 'tip.pgd':
      if (o.lastIp) t.trackLastIp(b, at, p.ipc, p.ip);
      return;
    case 'pip':
      b.trackId = 'cr3';
      b.trackPayload = hex16(p.cr3);
      return;
    case 'vmcs':
      b.trackId = 'vmcs';
      b.trackPayload = hex16(p.base);
      return;
    case 'cfe':
      b.trackId = 'type';
      b.trackPayload = CFE_NAMES[p.type] || 'unknown';
      return;
    case 'evd':
      b.trackId = 'type';
      b.trackPayload = EVD_NAMES[p.type] ?? 'unknown';
      return;
    case 'mode.exec':
      if (o.execMode) {
        b.trackId = 'em';
        b.trackPayload = execModeName(p);
      }
      return;
    case 'tsc':
      if (t.opts.trackTime) t.tscPacket(b, at, p.tsc);
      b.skip = !!o.noTiming;
      return;
    case 'cbr':
      if (t.opts.trackTime) t.cbrPacket(b, at, p.ratio);
      b.skip = !!o.noTiming;
      return;
    case 'tma':
      if (t.opts.trackTime) t.tmaPacket(b, at, p.ctc, p.fc);
      b.skip = !!o.noTiming;
      return;
    case 'mtc':
      if (t.opts.trackTime) t.mtcPacket(b, at, p.ctc);
      b.skip = !!o.noTiming;
      return;
    case 'cyc':
      if (t.opts.trackTime && !o.noCyc) t.cycPacket(b, at, p.value);
      b.skip = !!(o.noTiming || o.noCyc);
      return;
    default:
      return;
  }
}

const newBuffer = (): PtdumpBuffer => ({
  opcode: '',
  payload: '',
  trackId: '',
  trackPayload: '',
  skip: false,
  skipTime: false,
  skipTcal: false,
});

/** What ptdump prints before the dump: the error for a --cpu whose errata libipt does not know. */
export function ptdumpPreamble(o: PtdumpOptions): string[] {
  return o.cpu && !cpuErrata(o.cpu) ? [diag(0, 'failed to determine errata', 'bad_cpu')] : [];
}

/** ptdump's output for a whole PT stream, line by line. */
export function* ptdumpLines(bytes: Uint8Array, o: PtdumpOptions = {}): Generator<string> {
  const errata = (o.cpu && cpuErrata(o.cpu)) || NO_ERRATA;
  if (!o.noPreamble) yield* ptdumpPreamble(o);
  const out: string[] = [];
  const trackTime = !!(o.time || o.tcal);
  const t = new PtdumpTracking(
    {
      trackTime,
      showTime: !!o.time,
      showTcal: !!o.tcal,
      timeDelta: !!o.timeDelta,
      noTcal: !!o.noTcal,
      noWallClock: !!o.noWallClock,
      keepTcalOnOvf: !!o.keepTcalOnOvf,
    },
    {
      mtcFreq: o.mtcFreq ?? 0,
      nomFreq: o.nomFreq ?? 0,
      cpuid15Eax: o.cpuid15Eax ?? 0,
      cpuid15Ebx: o.cpuid15Ebx ?? 0,
      skl168: errata.skl168,
    },
    out,
  );
  const c = new PacketCursor(bytes, { dialect: o.dialect ?? 'libipt-2.3' });
  if (o.noSync) c.sync = 0;
  else if (!c.syncForward(true)) return;
  const end = bytes.length;
  for (;;) {
    // dump_packets: true when it stopped at an error (then resync), false at the end of the trace
    let resync = false;
    while (c.pos < end) {
      const at = c.pos;
      const n = c.next();
      let p: Packet | undefined;
      let size: number;
      if (n > 0) {
        size = c.raw.size;
        // SKD007: a 2-byte CYC whose 2nd byte looks like an ext opcode, followed by an OVF opcode, is an OVF
        if (errata.skd007 && c.raw.type === PT.CYC && size === 2 && c.raw.lo >>> 5 === 1 && bytes[at + 2] === 0xf3) {
          c.pos = at + 3;
          p = { kind: 'ovf', offset: at, size: 2 };
        } else p = toPacket(c.raw, at);
      } else if (n === NEED_MORE_BYTES) break;
      else if (errata.skz84 && bytes[at] === 0x02 && bytes[at + 1] === 0x73) {
        // SKZ84: a TMA with reserved bits set is reported as an invalid packet of TMA size + 1
        size = 8;
        c.pos = at + size;
      } else {
        yield diag(at, 'error decoding packet', n === ERR_BAD_OPCODE ? 'bad_opc' : 'bad_packet');
        resync = true;
        break;
      }
      let raw = '';
      if (o.rawBytes) {
        if (at + size > end) {
          yield diag(at, 'bad packet size', 'bad_packet');
          resync = true;
          break;
        }
        for (let i = at; i < at + size; i++) raw += (bytes[i] ?? 0).toString(16).padStart(2, '0');
      }
      const b = newBuffer();
      if (p) printPacket(b, p, t, o);
      else b.opcode = '<invalid>';
      if (out.length) {
        yield* out;
        out.length = 0;
      }
      const line = bufferLine(b, at, raw, o);
      if (line !== undefined) yield line;
    }
    if (!resync || !c.syncForward()) return;
    t.reset();
  }
}
