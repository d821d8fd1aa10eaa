import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { iteratePackets, type Packet, type PacketError } from './index.js';
import { ptdumpLines } from '../../format/pt-packets-ptdump.js';
import { libiptHarness, libiptEncode, libiptEncodeMany, libiptPackets } from '../../../tools/libipt-harness/harness.js';
import { cannotCompare } from '../../../test/require-tool.js';
import { tempDir } from '../../../test/temp-dir.js';

/**
 * Field-by-field comparison with Intel's libipt: streams are encoded by
 * libipt's own encoder (pt_enc_next) from text descriptions, decoded by
 * libipt's packet decoder (pt_pkt_next, printed by pt-pkts) and by ours.
 */

const h = (v: bigint | number): string => v.toString(16);
const ERR: Record<PacketError['code'], string> = {
  'bad-opcode': 'unknown opcode',
  'bad-packet': 'unknown packet',
  truncated: 'reached end of trace stream',
};

/** Our packet printed the way pt-pkts prints libipt's. */
function line(p: Packet | PacketError): string {
  const off = h(p.offset);
  let f: string;
  switch (p.kind) {
    case 'error':
      return `${off} error ${ERR[p.code]}`;
    case 'tnt.8':
    case 'tnt.64':
      f = `${p.kind} ${p.count} ${h(p.bits)}`;
      break;
    case 'tip':
    case 'tip.pge':
    case 'tip.pgd':
    case 'fup':
      f = `${p.kind} ${p.ipc} ${h(p.ip ?? 0n)}`;
      break;
    case 'mode.exec':
      f = `mode.exec ${+p.csl} ${+p.csd}`;
      break;
    case 'mode.tsx':
      f = `mode.tsx ${+p.intx} ${+p.abrt}`;
      break;
    case 'pip':
      f = `pip ${h(p.cr3)} ${+p.nr}`;
      break;
    case 'vmcs':
      f = `vmcs ${h(p.base)}`;
      break;
    case 'cbr':
      f = `cbr ${h(p.ratio)}`;
      break;
    case 'tsc':
      f = `tsc ${h(p.tsc)}`;
      break;
    case 'tma':
      f = `tma ${h(p.ctc)} ${h(p.fc)}`;
      break;
    case 'mtc':
      f = `mtc ${h(p.ctc)}`;
      break;
    case 'cyc':
      f = `cyc ${h(p.value)}`;
      break;
    case 'mnt':
      f = `mnt ${h(p.payload)}`;
      break;
    case 'exstop':
      f = `exstop ${+p.ipBit}`;
      break;
    case 'mwait':
      f = `mwait ${h(p.hints)} ${h(p.ext)}`;
      break;
    case 'pwre':
      f = `pwre ${h(p.state)} ${h(p.subState)} ${+p.hw}`;
      break;
    case 'pwrx':
      f = `pwrx ${h(p.last)} ${h(p.deepest)} ${+p.interrupt} ${+p.store} ${+p.autonomous}`;
      break;
    case 'ptw':
      f = `ptw ${p.plc} ${h(p.payload)} ${+p.ipBit}`;
      break;
    default:
      f = p.kind;
  }
  return `${off} ${f} size ${p.size}`;
}

/**
 * Decodes each stream with libipt 2.0.5 (one pt-pkts run for all) and with
 * ours; the packets must be equal. (The ptdump text is compared with Intel's
 * ptdump 2.3 itself: test/ptdump-libipt23.test.ts.)
 */
function compareMany(
  ptPkts: string,
  streams: Uint8Array[],
  dir: string,
  what: (k: number) => string = (k) => `stream ${k}`,
): void {
  const files = streams.map((b, k) => {
    const f = join(dir, `cmp-${k}.pt`);
    writeFileSync(f, b);
    return f;
  });
  const theirs = libiptPackets(ptPkts, files);
  streams.forEach((bytes, k) => {
    const ours = [...iteratePackets(bytes, { dialect: 'libipt-2.0' })].map(line);
    assert.deepEqual(ours, theirs[k], what(k));
  });
}

function compare(ptPkts: string, bytes: Uint8Array, dir: string): void {
  compareMany(ptPkts, [bytes], dir);
}

// Every packet kind libipt 2.0 can encode, and every IP compression.
const EVERY_KIND = `psb
mode.exec 1 0
mode.exec 0 1
mode.tsx 1 0
mode.tsx 0 1
pip 0x12345000 1
pip 0xfffffffe0 0
vmcs 0x123456789000
cbr 0x24
tsc 0xffeeddccbbaa99
tma 0xbeef 0x1ff
mtc 0xa5
cyc 0x1f
cyc 0x1fffffff
cyc 0xfffffffffffffff
psbend
tip.pge 6 0xffffffff81000000
tnt.8 1 1
tnt.8 6 0x2a
tnt.64 47 0x5555aaaa5555
tnt.64 1 0
tip 0 0
tip 1 0xbeef
tip 2 0xdeadbeef
tip 3 0x800000001234
tip 3 0x7fffffff1234
tip 4 0xffff81234567
tip 6 0x123456789abcdef0
fup 3 0xffff8000
tip.pgd 0 0
fup 6 0xffffffff81001234
tip.pgd 1 0x4242
stop
ovf
mnt 0x0123456789abcdef
exstop 0
exstop 1
mwait 0x20 0x1
pwre 2 1 1
pwre 0xf 0xf 0
pwrx 6 2 1 0 0
pwrx 1 3 0 1 0
pwrx 2 2 0 0 1
ptw 0 0xdeadbeef 0
ptw 1 0x0123456789abcdef 1
pad
pad
`;

test('every packet kind and IP compression decodes as libipt decodes it', (t) => {
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const dir = tempDir('pt-libipt-');
  const bytes = libiptEncode(hv.ptEnc, EVERY_KIND);
  compare(hv.ptPkts, bytes, dir);
  // the 'libipt' dialect knows the newer packets too, but agrees on all of these
  const kinds = new Set([...iteratePackets(bytes)].map((p) => p.kind));
  assert.ok(kinds.size >= 24, [...kinds].join(' '));
  assert.ok(!kinds.has('error'));
  // every truncation ends with libipt's end-of-stream error at the same place
  const cuts: Uint8Array[] = [];
  for (let n = 1; n < bytes.length; n++) cuts.push(bytes.subarray(0, n));
  compareMany(hv.ptPkts, cuts, dir, (k) => `cut at ${k + 1}`);
});

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const hexb = (v: bigint | number) => `0x${v.toString(16)}`;
const packetLine = fc.oneof(
  fc.constantFrom('pad', 'psb', 'psbend', 'ovf', 'stop'),
  fc
    .tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 63 }))
    .map(([n, v]) => `tnt.8 ${n} ${v & ((1 << n) - 1)}`),
  fc.tuple(fc.integer({ min: 1, max: 47 }), u64).map(([n, v]) => `tnt.64 ${n} ${hexb(v & ((1n << BigInt(n)) - 1n))}`),
  fc
    .tuple(fc.constantFrom('tip', 'tip.pge', 'tip.pgd', 'fup'), fc.constantFrom(0, 1, 2, 3, 4, 6), u64)
    .map(([k, ipc, ip]) => `${k} ${ipc} ${hexb(ip)}`),
  fc.tuple(fc.boolean(), fc.boolean()).map(([a, b]) => `mode.exec ${+a} ${+b}`),
  fc.tuple(fc.boolean(), fc.boolean()).map(([a, b]) => `mode.tsx ${+a} ${+b}`),
  fc.tuple(u64, fc.boolean()).map(([v, nr]) => `pip ${hexb(v & ((1n << 52n) - 1n))} ${+nr}`),
  u64.map((v) => `tsc ${hexb(v & ((1n << 56n) - 1n))}`),
  fc.integer({ min: 0, max: 255 }).map((v) => `cbr ${v}`),
  fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0x1ff })).map(([c, f]) => `tma ${c} ${f}`),
  fc.integer({ min: 0, max: 255 }).map((v) => `mtc ${v}`),
  u64.map((v) => `cyc ${hexb(v >> BigInt(Number(v & 63n)))}`),
  u64.map((v) => `vmcs ${hexb(v & 0xfffffffffff000n)}`),
  u64.map((v) => `mnt ${hexb(v)}`),
  fc.boolean().map((b) => `exstop ${+b}`),
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 3 })).map(([a, b]) => `mwait ${a} ${b}`),
  fc
    .tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 15 }), fc.boolean())
    .map(([a, b, c]) => `pwre ${a} ${b} ${+c}`),
  fc
    .tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 2 }))
    .map(([a, b, w]) => `pwrx ${a} ${b} ${+(w === 0)} ${+(w === 1)} ${+(w === 2)}`),
  fc
    .tuple(fc.integer({ min: 0, max: 1 }), u64, fc.boolean())
    .map(([plc, v, ip]) => `ptw ${plc} ${hexb(plc ? v : v & 0xffffffffn)} ${+ip}`),
  // garbage, to exercise errors and the resync at the next PSB
  fc.uint8Array({ minLength: 1, maxLength: 12 }).map((b) => `raw ${[...b].map((x) => x.toString(16)).join(' ')}`),
);

test(
  'random streams (fast-check → pt-enc): ours and libipt agree packet by packet, errors and resyncs ' + 'included',
  (t) => {
    const hv = libiptHarness();
    if ('skip' in hv) return cannotCompare(t, hv.skip);
    const dir = tempDir('pt-libipt-');
    // fast-check generates the streams; they are encoded and decoded in batches (3 processes, not 3 per stream)
    const cases = fc
      .sample(fc.array(packetLine, { minLength: 1, maxLength: 100 }), 300)
      .map((l) => `${l.join('\n')}\n`);
    const streams = libiptEncodeMany(hv.ptEnc, cases, dir);
    compareMany(hv.ptPkts, streams, dir, (k) => `random stream:\n${cases[k]}`);
  },
);

test('ptdump text: leading bytes skipped, payload spelling, error lines', (t) => {
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const lead = [...ptdumpLines(libiptEncode(hv.ptEnc, 'raw 00 19\npsb\n'))];
  // ptdump starts at the first PSB, so the bytes before it are not shown
  assert.deepEqual(lead, ['0000000000000002  psb']);
  const bytes = libiptEncode(hv.ptEnc, `${EVERY_KIND}raw 05\npsb\nfup 3 0x1000\n`);
  const lines = [...ptdumpLines(bytes)];
  assert.ok(lines.some((l) => /^[0-9a-f]{16} {2}fup {8}3: 0000000000001000$/.test(l)));
  assert.ok(lines.some((l) => /^\[[0-9a-f]+: error decoding packet: unknown opcode\]$/.test(l)));
  compare(hv.ptPkts, bytes, tempDir('pt-libipt-'));
});

test(
  'resync after an error: a PSB partly consumed by the bad packet is found (libipt starts ≤ 15 bytes ' +
    'early), the PSB just left is not',
  (t) => {
    const hv = libiptHarness();
    if ('skip' in hv) return cannotCompare(t, hv.skip);
    const dir = tempDir('pt-libipt-');
    // found by the random-stream property: "91 58" starts a TIP.PGE whose payload eats the PSB's first bytes
    const partly =
      'cyc 0x1f058b3966906db0\ntip.pgd 6 0x4704407d24870638\npad\ncyc 0x3b5914077\ntsc 0xea778b8db24a0\n' +
      'raw 91 58\npsb\nvmcs 0x5aa9ca10fdb000\ntsc 0x66ec2ebeeb0963\n';
    // a bad opcode right after a PSB: resyncing must not return to that PSB (no endless loop)
    const afterPsb = 'psb\nraw d9\npad\n';
    const streams = libiptEncodeMany(hv.ptEnc, [partly, afterPsb], dir);
    compareMany(hv.ptPkts, streams, dir);
    const ours = [...iteratePackets(streams[0]!, { dialect: 'libipt-2.0' })];
    assert.ok(
      ours.some((p) => p.kind === 'psb' && p.offset === 0x23),
      'resynced to the PSB at 0x23, before the error at 0x29',
    );
  },
);
