import { PT, CTX_NONE, type PacketContext } from '../intelpt/packets/kinds.js';
import { RawPacket, decodeRaw, nextContext, DIALECT_PERF } from '../intelpt/packets/raw-decode.js';
import { hex2 } from '../io/hex.js';

/**
 * perf's text for Intel PT packets, byte for byte as perf 6.1 prints them in
 * `perf script -D` / `perf report -D` (tools/perf/util/intel-pt.c
 * intel_pt_dump() and intel-pt-pkt-decoder.c intel_pt_pkt_desc()).
 *
 * Two perf habits are reproduced on purpose: zero bytes after a packet are
 * folded into it until the line holds 8 bytes (intel_pt_get_packet), and a
 * byte that does not decode prints as a 1-byte "Bad packet!" line, decoding
 * going on at the next byte (no PSB resync in the dump).
 */

const hex = (lo: number, hi: number): string =>
  hi ? hi.toString(16) + lo.toString(16).padStart(8, '0') : lo.toString(16);
const big = (lo: number, hi: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);

/** perf's intel_pt_pkt_desc() for a packet decoded in the 'perf' dialect. */
export function perfPacketDesc(r: RawPacket, bytes: Uint8Array, at: number): string {
  switch (r.type) {
    case PT.PAD:
      return 'PAD';
    case PT.PSB:
      return 'PSB';
    case PT.PSBEND:
      return 'PSBEND';
    case PT.STOP:
      return 'TraceSTOP';
    case PT.OVF:
      return 'OVF';
    case PT.TNT8:
    case PT.TNT64: {
      let s = 'TNT ';
      for (let i = r.count - 1; i >= 0; i--) {
        const bit = i >= 32 ? (r.hi >>> (i - 32)) & 1 : (r.lo >>> i) & 1;
        s += bit ? 'T' : 'N';
      }
      return `${s} (${r.count})`;
    }
    case PT.TIP:
    case PT.TIP_PGE:
    case PT.TIP_PGD:
    case PT.FUP: {
      const name =
        r.type === PT.TIP ? 'TIP' : r.type === PT.TIP_PGE ? 'TIP.PGE' : r.type === PT.TIP_PGD ? 'TIP.PGD' : 'FUP';
      return r.ipc ? `${name} 0x${hex(r.lo, r.hi)}` : `${name} no ip`;
    }
    case PT.CYC:
      return `CYC 0x${hex(r.lo, r.hi)}`;
    case PT.VMCS:
      return `VMCS 0x${hex(r.lo, r.hi)}`;
    case PT.MTC:
      return `MTC 0x${hex(r.lo, 0)}`;
    case PT.MNT:
      return `MNT 0x${hex(r.lo, r.hi)}`;
    case PT.CBR:
      // perf reads the ratio as a u16 including the reserved byte
      return `CBR 0x${hex(r.lo | (r.hi << 8), 0)}`;
    case PT.TSC:
      return `TSC 0x${hex(r.lo, r.hi)}`;
    case PT.TMA:
      return `TMA CTC 0x${r.lo.toString(16)} FC 0x${r.count.toString(16)}`;
    case PT.MODE_EXEC: {
      const bits = r.lo & 3;
      const mode = bits === 1 ? 64 : bits === 2 ? 32 : 16;
      return `MODE.Exec IF:${r.lo & 4 ? 1 : 0} ${mode}`;
    }
    case PT.MODE_TSX:
      return `MODE.TSX TXAbort:${(r.lo >>> 1) & 1} InTX:${r.lo & 1}`;
    case PT.PIP: {
      // perf prints payload >> 1 (CR3 >> 5) and the NR bit apart
      const p = big(r.lo, r.hi);
      return `PIP 0x${(p >> 1n).toString(16)} (NR=${r.lo & 1})`;
    }
    case PT.PTW:
      return `PTWRITE 0x${hex(r.lo, r.hi)} IP:${r.flag}`;
    case PT.BEP:
      return `BEP IP:${r.flag}`;
    case PT.EXSTOP:
      return `EXSTOP IP:${r.flag}`;
    case PT.MWAIT:
      return `MWAIT 0x${hex(r.lo, r.hi)} Hints 0x${(r.lo & 0xff).toString(16)} Extensions 0x${(r.hi & 3).toString(16)}`;
    case PT.PWRE:
      return (
        `PWRE 0x${hex(r.lo, 0)} HW:${r.lo & 0x80 ? 1 : 0} CState:${(r.lo >>> 12) & 0xf} ` +
        `Sub-CState:${(r.lo >>> 8) & 0xf}`
      );
    case PT.PWRX:
      return (
        `PWRX 0x${hex(r.lo, r.hi)} Last CState:${(r.lo >>> 4) & 0xf} Deepest CState:${r.lo & 0xf} ` +
        `Wake Reason 0x${((r.lo >>> 8) & 0xf).toString(16)}`
      );
    case PT.BBP:
      return `BBP SZ ${r.count ? '4' : '8'}-byte Type 0x${r.lo.toString(16)}`;
    case PT.BIP:
      return `BIP ID 0x${hex2(r.count)} Value 0x${hex(r.lo, r.hi)}`;
    case PT.CFE:
      return `CFE IP:${r.flag} Type 0x${hex2(r.count)} Vector 0x${r.lo.toString(16)}`;
    case PT.EVD:
      return `EVD Type 0x${hex2(r.count)} Payload 0x${hex(r.lo, r.hi)}`;
    default:
      void bytes;
      void at;
      return `?? 0x${hex(r.lo, r.hi)} (${r.count})`;
  }
}

/**
 * The lines perf prints for one AUXTRACE buffer of intel_pt data, starting
 * with ". ... Intel Processor Trace data: size N bytes". Offsets are relative
 * to the start of `bytes` (perf prints them per buffer).
 */
export function* perfDumpLines(bytes: Uint8Array, start = 0, end = bytes.length): Generator<string> {
  yield `. ... Intel Processor Trace data: size ${end - start} bytes`;
  const r = new RawPacket();
  let ctx: PacketContext = CTX_NONE;
  let pos = start;
  while (pos < end) {
    let ret = decodeRaw(bytes, pos, end, r, ctx, DIALECT_PERF);
    const ok = ret > 0;
    if (ok) {
      while (ret < 8 && pos + ret < end && bytes[pos + ret] === 0) ret++;
      ctx = nextContext(ctx, r);
    } else ret = 1;
    let line = `.  ${(pos - start).toString(16).padStart(8, '0')}: `;
    for (let i = 0; i < ret; i++) line += ` ${hex2(bytes[pos + i]!)}`;
    for (let i = ret; i < 16; i++) line += '   ';
    line += ok ? ` ${perfPacketDesc(r, bytes, pos)}` : ' Bad packet!';
    yield line;
    pos += ret;
  }
}
