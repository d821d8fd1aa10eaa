import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodePacket, NEED_MORE, iteratePackets, LastIp } from './index.js';
import { perfDumpLines } from '../../format/pt-packets-perf.js';
import { ptdumpLines } from '../../format/pt-packets-ptdump.js';

const PSB = [0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82];

// Bytes written from the SDM's packet layouts (Vol. 3C, "Intel Processor Trace"), one comment each.
const cases: Array<[string, number[], Record<string, unknown>]> = [
  ['pad', [0x00], { kind: 'pad', size: 1 }],
  ['psb', PSB, { kind: 'psb', size: 16 }],
  ['psbend', [0x02, 0x23], { kind: 'psbend', size: 2 }],
  ['tnt.8 T N T', [(((0b00001101 << 1) >> 1) << 0) | 0], {}], // replaced below
  ['tnt.64', [0x02, 0xa3, 0x05, 0, 0, 0, 0, 0], { kind: 'tnt.64', count: 2, bits: 1n }], // stop bit 2, bits "01"
  ['tip ipc 0', [0x0d], { kind: 'tip', ipc: 0, ip: undefined }],
  ['tip.pge ipc 1', [0x31, 0x34, 0x12], { kind: 'tip.pge', ipc: 1, ip: 0x1234n }],
  ['tip.pgd ipc 2', [0x41, 0x78, 0x56, 0x34, 0x12], { kind: 'tip.pgd', ipc: 2, ip: 0x12345678n }],
  ['fup ipc 3', [0x7d, 1, 2, 3, 4, 5, 0x86], { kind: 'fup', ipc: 3, ip: 0x860504030201n }],
  ['tip ipc 4', [0x8d, 1, 2, 3, 4, 5, 6], { kind: 'tip', ipc: 4, ip: 0x060504030201n }],
  ['tip ipc 6', [0xcd, 1, 2, 3, 4, 5, 6, 7, 0xff], { kind: 'tip', ipc: 6, ip: 0xff07060504030201n }],
  ['mode.exec', [0x99, 0x05], { kind: 'mode.exec', csl: true, csd: false, iflag: true }],
  ['mode.tsx', [0x99, 0x22], { kind: 'mode.tsx', intx: false, abrt: true }],
  ['pip', [0x02, 0x43, 0x03, 0, 0, 0, 0, 0], { kind: 'pip', nr: true, cr3: 0x20n }],
  ['tsc', [0x19, 1, 2, 3, 4, 5, 6, 7], { kind: 'tsc', tsc: 0x07060504030201n }],
  ['mtc', [0x59, 0xab], { kind: 'mtc', ctc: 0xab }],
  ['cyc 1 byte', [0x0b], { kind: 'cyc', value: 1n }], // 00001 0 11
  ['cyc 2 bytes', [0x0f, 0x02], { kind: 'cyc', value: 1n | (1n << 5n) }],
  ['tma', [0x02, 0x73, 0x34, 0x12, 0, 0x55, 0x01], { kind: 'tma', ctc: 0x1234, fc: 0x155 }],
  ['cbr', [0x02, 0x03, 0x20, 0], { kind: 'cbr', ratio: 0x20 }],
  ['vmcs', [0x02, 0xc8, 1, 2, 3, 4, 5], { kind: 'vmcs', base: 0x0504030201n << 12n }],
  ['ovf', [0x02, 0xf3], { kind: 'ovf' }],
  ['stop', [0x02, 0x83], { kind: 'stop' }],
  ['ptw 4', [0x02, 0x12, 1, 2, 3, 4], { kind: 'ptw', plc: 0, ipBit: false, payload: 0x04030201n }],
  [
    'ptw 8 ip',
    [0x02, 0xb2, 1, 2, 3, 4, 5, 6, 7, 8],
    { kind: 'ptw', plc: 1, ipBit: true, payload: 0x0807060504030201n },
  ],
  ['mwait', [0x02, 0xc2, 0x10, 0, 0, 0, 0x01, 0, 0, 0], { kind: 'mwait', hints: 0x10, ext: 1 }],
  ['pwre', [0x02, 0x22, 0x08, 0x21], { kind: 'pwre', hw: true, state: 2, subState: 1 }], // hw: libipt's bit 3
  ['pwrx', [0x02, 0xa2, 0x21, 0x01, 0, 0, 0], { kind: 'pwrx', last: 2, deepest: 1, interrupt: true, store: false }],
  ['exstop ip', [0x02, 0xe2], { kind: 'exstop', ipBit: true }],
  ['bbp', [0x02, 0x63, 0x82], { kind: 'bbp', sz4: true, type: 2 }],
  ['bep', [0x02, 0x33], { kind: 'bep', ipBit: false }],
  ['cfe', [0x02, 0x13, 0x81, 0x0e], { kind: 'cfe', ipBit: true, type: 1, vector: 0x0e }],
  ['evd', [0x02, 0x53, 0x02, 1, 0, 0, 0, 0, 0, 0, 0], { kind: 'evd', type: 2, payload: 1n }],
  ['mnt', [0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8], { kind: 'mnt', payload: 0x0807060504030201n }],
];
// TNT.8: stop bit at bit 4 of (byte >> 1): 1 T N T -> byte = 0b1_101_0 << 0 = (0b1101 << 1)
cases[3] = ['tnt.8 TNT', [0b1101 << 1], { kind: 'tnt.8', count: 3, bits: 0b101n }];

for (const [name, bytes, want] of cases) {
  test(`decode ${name}, then every truncation is NEED_MORE`, () => {
    const b = Uint8Array.from(bytes);
    const p = decodePacket(b, 0);
    assert.notEqual(p, NEED_MORE);
    assert.ok(
      typeof p === 'object' && p.kind !== 'error',
      JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? v.toString(16) : v)),
    );
    assert.equal(p.size, b.length);
    for (const [k, v] of Object.entries(want))
      assert.deepEqual((p as unknown as Record<string, unknown>)[k], v, `${name}.${k}`);
    for (let n = 1; n < b.length; n++)
      assert.equal(decodePacket(b.subarray(0, n), 0), NEED_MORE, `${name} cut at ${n}`);
  });
}

test('bad opcodes and bad payloads are errors at their offset', () => {
  assert.deepEqual(decodePacket(Uint8Array.from([0, 0x05]), 1), { kind: 'error', offset: 1, code: 'bad-opcode' });
  assert.deepEqual(decodePacket(Uint8Array.from([0xad, 0, 0, 0, 0, 0, 0, 0, 0]), 0), {
    kind: 'error',
    offset: 0,
    code: 'bad-packet',
  }); // ipc 5
  assert.deepEqual(
    decodePacket(
      Uint8Array.from([0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x83]),
      0,
    ),
    {
      kind: 'error',
      offset: 0,
      code: 'bad-packet',
    },
  );
});

test('iterator resyncs at the next PSB after a bad packet', () => {
  const b = Uint8Array.from([0x02, 0x23, 0x05, 0x00, 0x00, ...PSB, 0x02, 0x23]);
  const got = [...iteratePackets(b)].map((p) => `${p.kind}@${p.offset}`);
  assert.deepEqual(got, ['psbend@0', 'error@2', 'psb@5', 'psbend@21']);
});

test('LastIp follows libipt pt_last_ip', () => {
  const l = new LastIp();
  assert.equal(l.status, 'noip');
  l.update(3, 0x800000001000n);
  assert.equal(l.query(), 0xffff800000001000n);
  l.update(1, 0x2345n);
  assert.equal(l.query(), 0xffff800000002345n);
  l.update(0);
  assert.equal(l.status, 'suppressed');
  l.update(2, 0xdeadbeefn);
  assert.equal(l.query(), 0xffff8000deadbeefn);
  l.update(4, 0x123456789abcn);
  assert.equal(l.query(), 0xffff123456789abcn);
  l.update(6, 0x42n);
  assert.equal(l.query(), 0x42n);
  assert.equal(l.update(5, 1n), false);
});

test('formatters produce one line per packet', () => {
  const b = Uint8Array.from([...PSB, 0x19, 0xa2, 0x23, 0x06, 0x8f, 0x4d, 0, 0, 0x02, 0x23]);
  const perf = [...perfDumpLines(b)];
  assert.equal(perf[0], '. ... Intel Processor Trace data: size 26 bytes');
  // exact spacing is checked against perf itself in test/pt-dump.test.ts
  assert.match(perf[2]!, /^\. {2}00000010: {2}19 a2 23 06 8f 4d 00 00 +TSC 0x4d8f0623a2$/);
  const pd = [...ptdumpLines(b)];
  assert.deepEqual(pd, [
    '0000000000000000  psb',
    '0000000000000010  tsc        4d8f0623a2',
    '0000000000000018  psbend',
  ]);
});

test('arbitrary bytes: no throw, offsets strictly increase, perf dump covers every byte once', async () => {
  const fc = (await import('fast-check')).default;
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
      for (const dialect of ['libipt', 'libipt-2.0', 'perf'] as const) {
        let last = -1;
        for (const p of iteratePackets(b, { dialect })) {
          assert.ok(p.offset > last && p.offset < b.length);
          last = p.offset;
        }
      }
      let covered = 0;
      for (const l of [...perfDumpLines(b)].slice(1)) covered += (l.slice(13, 61).match(/[0-9a-f]{2}/g) ?? []).length;
      assert.equal(covered, b.length);
    }),
    { numRuns: 300 },
  );
});
