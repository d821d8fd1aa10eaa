/**
 * PT scenarios in a few words per packet, in the spirit of libipt's `.ptt`
 * files, encoded with the project's PacketEncoder (src/intelpt/packet-encoder.ts):
 *
 *   psb | psbend | pad | ovf | stop | tnt.8 N BITS | tip|tip.pge|tip.pgd|fup IPC IP
 *   mode.exec CSL CSD [IF] | mode.tsx INTX ABRT | tsc V | mtc V | cyc V | cbr V | tma CTC FC
 *   pip CR3 NR | vmcs BASE | ptw PLC PAYLOAD IP | exstop IP | mwait HINTS EXT
 *   pwre STATE SUB HW | pwrx LAST DEEPEST WAKE | mnt V | trig TRBV IP MULT [ICNT] | cfe TYPE VECTOR IP
 *   evd TYPE PAYLOAD | raw HEX…
 *
 * IPC 0 writes a suppressed IP.
 */
import { PacketEncoder, type IpCompressionValue } from '../src/intelpt/packet-encoder.js';

export function encodeScenario(lines: readonly string[]): Uint8Array {
  const e = new PacketEncoder();
  for (const line of lines) {
    const [op = '', ...a] = line.trim().split(/\s+/);
    const n = (i: number): number => Number(a[i] ?? 0);
    const b = (i: number): bigint => BigInt(a[i] ?? 0);
    const f = (i: number): boolean => n(i) !== 0;
    switch (op) {
      case 'psb':
        e.psb();
        break;
      case 'psbend':
        e.psbend();
        break;
      case 'pad':
        e.pad();
        break;
      case 'ovf':
        e.ovf();
        break;
      case 'stop':
        e.stop();
        break;
      case 'tnt.8':
        e.tnt(b(1), n(0));
        break;
      case 'tip':
      case 'tip.pge':
      case 'tip.pgd':
      case 'fup': {
        const ipc = n(0) as IpCompressionValue;
        const ip = ipc === 0 ? null : b(1);
        if (op === 'tip') e.tip(ip, ipc);
        else if (op === 'tip.pge') e.tipPge(ip, ipc);
        else if (op === 'tip.pgd') e.tipPgd(ip, ipc);
        else e.fup(ip, ipc);
        break;
      }
      case 'mode.exec':
        e.raw(new Uint8Array([0x99, n(0) | (n(1) << 1) | (n(2) << 2)]));
        break;
      case 'mode.tsx':
        e.modeTsx(f(0), f(1));
        break;
      case 'tsc':
        e.tsc(b(0));
        break;
      case 'mtc':
        e.mtc(n(0));
        break;
      case 'cyc':
        e.cyc(n(0));
        break;
      case 'cbr':
        e.cbr(n(0));
        break;
      case 'tma':
        e.tma(n(0), n(1));
        break;
      case 'pip':
        e.pip(b(0), f(1));
        break;
      case 'vmcs':
        e.vmcs(b(0));
        break;
      case 'ptw':
        e.ptw(n(0) ? 1 : 0, b(1), f(2));
        break;
      case 'exstop':
        e.exstop(f(0));
        break;
      case 'mwait':
        e.mwait(n(0), n(1));
        break;
      case 'pwre':
        e.pwre(n(0), n(1), f(2));
        break;
      case 'pwrx':
        e.pwrx(n(0), n(1), n(2));
        break;
      case 'mnt':
        e.mnt(b(0));
        break;
      case 'trig':
        e.trig(n(0), f(1), f(2), a[3] === undefined ? undefined : n(3));
        break;
      case 'cfe':
        e.cfe(n(0), n(1), f(2));
        break;
      case 'evd':
        e.evd(n(0), b(1));
        break;
      case 'raw':
        e.raw(new Uint8Array(a.map((x) => Number.parseInt(x, 16))));
        break;
      default:
        throw new Error(`pt scenario: unknown step ${JSON.stringify(line)}`);
    }
  }
  e.flushTnt();
  return e.bytes();
}
