import type { LastIp } from '../intelpt/packets/last-ip.js';
import type { Packet, PacketError } from '../intelpt/packets/packet.js';
import { iteratePackets } from '../intelpt/packets/cursor.js';
import type { PacketDialect } from '../intelpt/packets/raw-decode.js';

/**
 * The text of Intel's libipt `ptdump` (default options: offset column, no
 * raw bytes, no last-ip/time tracking), from ptdump.c print_packet() and
 * print_buffer(): a 16-digit hex offset padded to 17 columns, a space, the mnemonic padded
 * to 10 columns
 * when a payload follows, then the payload. A decode error prints as
 * `[offset: error decoding packet: <libipt error text>]` and ptdump resyncs
 * at the next PSB; bytes before the first PSB are skipped, as ptdump does.
 */

/** CFE types (SDM "Control Flow Event packet"). */
const CFE_INTR = 1;
const CFE_SIPI = 5;
const CFE_VMEXIT_INTR = 9;
const CFE_UINTR = 0xb;

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

/** [mnemonic, payload] as ptdump prints them. */
export function ptdumpFields(p: Packet): [string, string] {
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
      const csd = p.csd ? 'cs.d' : '';
      const csl = p.csl ? 'cs.l' : '';
      return ['mode.exec', csd + (csd && csl ? ', ' : '') + csl];
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
    // CFE/EVD as libipt 2.1's ptdump prints them (vector decimal for
    // interrupts, hex for SIPI, absent for the other types; types decimal).
    case 'cfe': {
      const ip = p.ipBit ? ', ip' : '';
      if (p.type === CFE_INTR || p.type === CFE_VMEXIT_INTR || p.type === CFE_UINTR)
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

/** libipt pt_errstr() texts for the errors a packet decoder returns. */
const ERRSTR: Record<PacketError['code'], string> = {
  'bad-opcode': 'unknown opcode',
  'bad-packet': 'unknown packet',
  truncated: 'reached end of trace stream',
};

export function ptdumpLine(p: Packet): string {
  const [op, payload] = ptdumpFields(p);
  const off = h(p.offset, 16);
  return payload ? `${off}  ${op.padEnd(10)} ${payload}` : `${off}  ${op}`;
}

/** ptdump's output for a whole PT stream. `lastIp` is unused unless asked (--lastip is not default). */
export function* ptdumpLines(
  bytes: Uint8Array,
  opts: { lastIp?: LastIp; dialect?: PacketDialect } = {},
): Generator<string> {
  for (const p of iteratePackets(bytes, { syncFirst: true, dialect: opts.dialect })) {
    if (p.kind === 'error') {
      // ptdump ends silently at a packet cut off by the end of the trace (pte_eos).
      if (p.code === 'truncated') return;
      yield `[${h(p.offset)}: error decoding packet: ${ERRSTR[p.code]}]`;
      continue;
    }
    opts.lastIp?.apply(p);
    yield ptdumpLine(p);
  }
}
