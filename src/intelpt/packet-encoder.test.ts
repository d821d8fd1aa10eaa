import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PacketEncoder, chooseIpCompression, IpCompression } from './packet-encoder.js';
import { iteratePackets, LastIp, type Packet } from './packets/index.js';

/**
 * Round trip through the packet decoder (src/intelpt/packets, itself checked
 * against libipt): what the encoder writes decodes to the packets it meant,
 * and the decoder's last IP equals the IP each compressed packet encodes.
 */

type Op =
  | { k: 'tnt'; bits: boolean[] }
  | { k: 'ip'; op: 'tip' | 'tip.pge' | 'tip.pgd' | 'fup'; ip: bigint | null }
  | { k: 'psb' }
  | { k: 'tsc'; v: bigint }
  | { k: 'mtc'; v: number }
  | { k: 'tma'; ctc: number; fc: number }
  | { k: 'cyc'; v: number }
  | { k: 'mode'; csl: boolean; csd: boolean }
  | { k: 'ovf' }
  | { k: 'pad' }
  | { k: 'cbr'; v: number };

const kernelIp = fc.bigInt({ min: 0xffffffff81000000n, max: 0xffffffff81ffffffn });
const userIp = fc.bigInt({ min: 0x400000n, max: 0x7fffffffffffn });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ k: fc.constant('tnt' as const), bits: fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }) }),
  fc.record({
    k: fc.constant('ip' as const),
    op: fc.constantFrom('tip' as const, 'tip.pge' as const, 'tip.pgd' as const, 'fup' as const),
    ip: fc.option(fc.oneof(kernelIp, userIp), { nil: null }),
  }),
  fc.constant({ k: 'psb' as const }),
  fc.record({ k: fc.constant('tsc' as const), v: fc.bigInt({ min: 0n, max: (1n << 56n) - 1n }) }),
  fc.record({ k: fc.constant('mtc' as const), v: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    k: fc.constant('tma' as const),
    ctc: fc.integer({ min: 0, max: 0xffff }),
    fc: fc.integer({ min: 0, max: 511 }),
  }),
  fc.record({ k: fc.constant('cyc' as const), v: fc.integer({ min: 0, max: 2 ** 30 }) }),
  fc.record({ k: fc.constant('mode' as const), csl: fc.boolean(), csd: fc.constant(false) }),
  fc.constant({ k: 'ovf' as const }),
  fc.constant({ k: 'pad' as const }),
  fc.record({ k: fc.constant('cbr' as const), v: fc.integer({ min: 0, max: 255 }) }),
);

function encode(ops: Op[], longTnt: boolean): { bytes: Uint8Array; expect: string[] } {
  const e = new PacketEncoder({ longTnt });
  const expect: string[] = [];
  let pending: boolean[] = [];
  const flushExpect = (): void => {
    const max = longTnt ? 47 : 6;
    for (let i = 0; i < pending.length; i += max)
      expect.push(
        `tnt ${pending
          .slice(i, i + max)
          .map((b) => (b ? 'T' : 'N'))
          .join('')}`,
      );
    pending = [];
  };
  for (const op of ops) {
    if (
      op.k !== 'tnt' &&
      op.k !== 'mtc' &&
      op.k !== 'tsc' &&
      op.k !== 'tma' &&
      op.k !== 'cyc' &&
      op.k !== 'mode' &&
      op.k !== 'pad' &&
      op.k !== 'cbr'
    )
      flushExpect();
    switch (op.k) {
      case 'tnt':
        for (const b of op.bits) {
          e.branch(b);
          pending.push(b);
          if (pending.length === (longTnt ? 47 : 6)) flushExpect();
        }
        break;
      case 'ip':
        if (op.op === 'tip') e.tip(op.ip);
        else if (op.op === 'tip.pge') e.tipPge(op.ip);
        else if (op.op === 'tip.pgd') e.tipPgd(op.ip);
        else e.fup(op.ip);
        expect.push(`${op.op} ${op.ip === null ? '-' : op.ip.toString(16)}`);
        break;
      case 'psb':
        e.psb();
        e.psbend();
        expect.push('psb', 'psbend');
        break;
      case 'tsc':
        e.tsc(op.v);
        expect.push(`tsc ${op.v.toString(16)}`);
        break;
      case 'mtc':
        e.mtc(op.v);
        expect.push(`mtc ${op.v}`);
        break;
      case 'tma':
        e.tma(op.ctc, op.fc);
        expect.push(`tma ${op.ctc} ${op.fc}`);
        break;
      case 'cyc':
        e.cyc(op.v);
        expect.push(`cyc ${op.v}`);
        break;
      case 'mode':
        e.modeExec(op.csl, op.csd);
        expect.push(`mode.exec ${op.csl}`);
        break;
      case 'ovf':
        e.ovf();
        expect.push('ovf');
        break;
      case 'pad':
        e.pad();
        expect.push('pad');
        break;
      case 'cbr':
        e.cbr(op.v);
        expect.push(`cbr ${op.v}`);
        break;
    }
  }
  e.flushTnt();
  flushExpect();
  return { bytes: e.bytes(), expect };
}

function describe(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const last = new LastIp();
  for (const p of iteratePackets(bytes) as Iterable<Packet | { kind: 'error'; offset: number; code: string }>) {
    if (p.kind === 'error') {
      out.push(`error ${p.code} at ${p.offset}`);
      continue;
    }
    last.apply(p as Packet);
    switch (p.kind) {
      case 'tnt.8':
      case 'tnt.64': {
        let s = '';
        for (let i = p.count - 1; i >= 0; i--) s += (p.bits >> BigInt(i)) & 1n ? 'T' : 'N';
        out.push(`tnt ${s}`);
        break;
      }
      case 'tip':
      case 'tip.pge':
      case 'tip.pgd':
      case 'fup':
        out.push(`${p.kind} ${p.ipc === 0 ? '-' : last.ip.toString(16)}`);
        break;
      case 'psb':
      case 'psbend':
      case 'ovf':
      case 'pad':
        out.push(p.kind);
        break;
      case 'tsc':
        out.push(`tsc ${p.tsc.toString(16)}`);
        break;
      case 'mtc':
        out.push(`mtc ${p.ctc}`);
        break;
      case 'tma':
        out.push(`tma ${p.ctc} ${p.fc}`);
        break;
      case 'cyc':
        out.push(`cyc ${p.value}`);
        break;
      case 'mode.exec':
        out.push(`mode.exec ${p.csl}`);
        break;
      case 'cbr':
        out.push(`cbr ${p.ratio}`);
        break;
      default:
        out.push(p.kind);
    }
  }
  return out;
}

test('every encoded packet decodes back, with last-IP compression reproducing each IP (short and long TNT)', () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 60 }), fc.boolean(), (ops, longTnt) => {
      const { bytes, expect } = encode(ops, longTnt);
      assert.deepEqual(describe(bytes), expect);
    }),
    { numRuns: 400 },
  );
});

test('IP compression is the smallest that works, like hardware', () => {
  assert.equal(chooseIpCompression(0xffffffff81001234n, 0xffffffff81000000n), IpCompression.update16);
  assert.equal(chooseIpCompression(0xffffffff82001234n, 0xffffffff81000000n), IpCompression.update32);
  assert.equal(chooseIpCompression(0xffffffff81001234n, 0n), IpCompression.sext48);
  assert.equal(chooseIpCompression(0x00007fff00001234n, 0n), IpCompression.sext48);
  assert.equal(chooseIpCompression(0x1234567800001234n, 0x1234000000000000n), IpCompression.update48);
  assert.equal(chooseIpCompression(0x1234567800001234n, 0n), IpCompression.full);
  const e = new PacketEncoder();
  e.tipPge(0xffffffff81000010n);
  e.tip(0xffffffff81000020n);
  // sext-48 then update-16: 1+6 and 1+2 bytes
  assert.deepEqual([...e.bytes()], [0x71, 0x10, 0, 0, 0x81, 0xff, 0xff, 0x2d, 0x20, 0x00]);
});

test('TNT packing: oldest outcome in the highest bit, 6 per short TNT', () => {
  const e = new PacketEncoder();
  for (const b of [true, false, true]) e.branch(b);
  e.flushTnt();
  assert.deepEqual([...e.bytes()], [0b00011010]);
  const l = new PacketEncoder({ longTnt: true });
  for (let i = 0; i < 47; i++) l.branch(i === 0);
  assert.deepEqual([...l.bytes()].slice(0, 2), [0x02, 0xa3]);
  assert.equal(l.bytes().length, 8);
});
