import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeAuxtracePriv, encodeAuxtracePriv, PERF_AUXTRACE_INTEL_PT, INTEL_PT_PRIV } from './auxtrace-info.js';
import { FormatError } from '../io/errors.js';
import { AuxQueues } from './aux-queues.js';

// (perf's own text for these fields is compared in test/pt-dump.test.ts)
test('intel_pt AUXTRACE_INFO: fields at perf intel-pt.h indexes, filter string, extra words', () => {
  const filter = 'filter 0xffffffff81000000/0x1000@/vmlinux';
  const s = Buffer.from(filter);
  const words = (s.length + 1 + 7) >> 3;
  const fb = new Uint8Array(words * 8);
  fb.set(s);
  const dv = new DataView(fb.buffer);
  const priv = [8n, 10n, 512n, 1000n, 1n, 0x400n, 0x800n, 1n, 0n, 1n, 0x200n, 3n, 2n, 1n, 2n, 33n, BigInt(s.length)];
  for (let i = 0; i < words; i++) priv.push(dv.getBigUint64(i * 8, true));
  priv.push(0xabcn);
  const info = decodeAuxtracePriv(PERF_AUXTRACE_INTEL_PT, priv);
  assert.equal(info.type, 'intel_pt');
  if (info.type !== 'intel_pt') return;
  assert.equal(info.pmuType, 8);
  assert.equal(info.tscBit, 0x400n);
  assert.equal(info.maxNonTurboRatio, 33);
  assert.equal(info.filter, filter);
  assert.deepEqual(info.extra, [0xabcn]);
  assert.deepEqual(encodeAuxtracePriv(info), { auxType: 1, priv });
});

test('old perf (no MTC fields) and other AUX types round-trip; short arrays are FormatErrors', () => {
  const old = [8n, 10n, 512n, 1000n, 1n, 0x400n, 0x800n, 0n, 0n, 1n];
  const i = decodeAuxtracePriv(1, old);
  assert.equal(i.type === 'intel_pt' && i.mtcBit, undefined);
  assert.deepEqual(encodeAuxtracePriv(i).priv, old);
  assert.deepEqual(encodeAuxtracePriv(decodeAuxtracePriv(3, [1n, 2n])), { auxType: 3, priv: [1n, 2n] });
  assert.throws(
    () => decodeAuxtracePriv(1, [1n, 2n], 0x208),
    (e: unknown) => e instanceof FormatError && e.offset === 0x208 && e.kind === 'bad-size',
  );
  const bad = [...old, 0n, 0n, 0n, 0n, 0n, 0n, 1000n];
  assert.equal(bad.length, INTEL_PT_PRIV.FILTER_STR_LEN + 1);
  assert.throws(() => decodeAuxtracePriv(1, bad), FormatError);
});

test('any intel_pt info survives encode → decode', () => {
  const u = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
  fc.assert(
    fc.property(
      fc.array(u, { minLength: 16, maxLength: 16 }),
      fc.option(fc.string({ maxLength: 40 }).filter((s) => !s.includes('\0'))),
      (w, filter) => {
        const priv = w.map((x, k) =>
          k === 0 || k === 1 || k === 2 || k === 7 || k === 11 || k === 12 || k === 13 || k === 15 ? x & 0xffffn : x,
        );
        const base = decodeAuxtracePriv(1, priv);
        if (base.type !== 'intel_pt') return;
        const withFilter = filter === null ? base : { ...base, filter };
        const enc = encodeAuxtracePriv(withFilter);
        const dec = decodeAuxtracePriv(enc.auxType, enc.priv);
        assert.deepEqual(encodeAuxtracePriv(dec), enc);
      },
    ),
  );
});

test('AuxQueues: per-CPU queues in offset order, AUX flags decoded', () => {
  const q = new AuxQueues(true);
  q.addBuffer({ offset: 0x2000n, size: 16, reference: 2n, idx: 0, tid: -1, cpu: 1 });
  q.addBuffer({ offset: 0x1000n, size: 16, reference: 1n, idx: 0, tid: -1, cpu: 1 });
  q.addBuffer({ offset: 0n, size: 16, reference: 3n, idx: 1, tid: -1, cpu: 0 });
  q.addAux(1, 5, { auxOffset: 0n, auxSize: 16n, flags: 0x9n });
  q.addItraceStart(0, { pid: 5, tid: 6 });
  const all = q.all();
  assert.deepEqual(
    all.map((x) => x.key),
    ['cpu:0', 'cpu:1'],
  );
  assert.deepEqual(
    all[1]!.buffers.map((b) => b.offset),
    [0x1000n, 0x2000n],
  );
  assert.deepEqual(all[1]!.auxEvents[0], {
    auxOffset: 0n,
    auxSize: 16n,
    flags: 9n,
    truncated: true,
    overwrite: false,
    partial: false,
    collision: true,
  });
  assert.equal(all[0]!.itraceStarts.length, 1);
  const t = new AuxQueues(false);
  t.addBuffer({ offset: 0n, size: 1, reference: 1n, idx: 0, tid: 42, cpu: -1 });
  assert.deepEqual(
    t.all().map((x) => x.key),
    ['tid:42'],
  );
});
