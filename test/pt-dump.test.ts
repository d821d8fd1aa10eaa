import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, openSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runPerf } from './cli.js';
import { simulate } from '../src/sim/index.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import { RecordType } from '../src/abi/record-type.js';
import { libiptHarness, libiptEncode } from '../tools/libipt-harness/harness.js';
import { ptdumpLines } from '../src/format/pt-packets-ptdump.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

/**
 * `perfpoke pt-dump` against perf 6.1's `perf script -D` on files perf
 * accepts as intel_pt recordings (the simulator's, which meet what perf needs
 * of such files: docs/design.md), with the AUX data replaced by
 * hand-made and random packet streams so every packet kind, perf's
 * zero-folding and its "Bad packet!" lines are compared.
 */
let dir = '';
let buffers: { dataAt: number; size: number }[] = [];

before(() => {
  dir = tempDir('pt-dump-');
  simulate({ out: join(dir, 'sim'), seed: 11, cpus: 2, flips: 1, size: 2000 });
});

async function auxBuffers(path: string): Promise<{ dataAt: number; size: number }[]> {
  const f = await PerfFile.open(path);
  const out: { dataAt: number; size: number }[] = [];
  for await (const r of f.records())
    if (r.type === RecordType.AUXTRACE) out.push({ dataAt: r.fileOffset + r.size, size: r.auxData!.length });
  await f.close();
  return out;
}

/** Copies the simulated recording, replacing AUX buffer k's bytes (zero padded to its size). */
async function withAux(name: string, fill: (k: number, size: number) => Uint8Array): Promise<string> {
  const d = join(dir, name);
  cpSync(join(dir, 'sim'), d, { recursive: true });
  buffers = await auxBuffers(join(d, 'data'));
  const fd = openSync(join(d, 'data'), 'r+');
  buffers.forEach((b, k) => {
    const bytes = new Uint8Array(b.size);
    const src = fill(k, b.size);
    bytes.set(src.subarray(0, b.size));
    writeSync(fd, bytes, 0, bytes.length, b.dataAt);
  });
  closeSync(fd);
  return d;
}

/**
 * The AUXTRACE blocks of perf -D text: each record line (from its file offset on) and the lines
 * up to the blank line.
 */
function blocks(text: string): string[][] {
  const lines = text.split('\n');
  const out: string[][] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /(0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_AUXTRACE(_INFO)? .*)$/.exec(lines[i]!);
    if (!m) continue;
    const b = [m[1]!];
    for (i++; i < lines.length && lines[i] !== ''; i++) b.push(lines[i]!);
    out.push(b);
  }
  return out;
}

function compareWithPerf(t: { skip: (m: string) => void }, d: string): boolean {
  const perf = runPerf(['script', '-D', '-i', d]);
  if (!perf) {
    cannotCompare(t, 'perf not installed');
    return false;
  }
  assert.equal(perf.status, 0, perf.stderr);
  const ours = runCli(['pt-dump', '-i', join(d, 'data')]);
  assert.equal(ours.status, 0, ours.stderr);
  const want = blocks(perf.stdout);
  assert.ok(want.length >= 3, 'perf printed AUXTRACE_INFO and two AUXTRACE buffers');
  assert.deepEqual(blocks(ours.stdout), want);
  return true;
}

test('pt-dump prints what perf script -D prints for the simulator recording', (t) => {
  compareWithPerf(t, join(dir, 'sim'));
});

test('every packet kind, zero folding, bad bytes and random bytes print as perf prints them', async (t) => {
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const encoded = libiptEncode(
    hv.ptEnc,
    `psb
mode.exec 1 0
mode.exec 0 1
mode.tsx 1 0
mode.tsx 0 1
raw 99 05
raw 99 22
pip 0x12345000 1
vmcs 0x123456789000
cbr 0x24
raw 02 03 24 01
tsc 0xffeeddccbbaa99
tma 0xbeef 0x1ff
raw 02 73 01 02 03 04 05
mtc 0xa5
cyc 0x1f
cyc 0xfffffffffffffff
raw 1f ff ff ff ff ff ff ff ff ff 00
psbend
tip.pge 6 0xffffffff81000000
tnt.8 6 0x2a
tnt.64 47 0x5555aaaa5555
raw 02 a3 01 00 00 00 00 00
raw 02 a3 00 00 00 00 00 00
tip 0 0
tip 1 0xbeef
tip 2 0xdeadbeef
tip 3 0x800000001234
tip 4 0xffff81234567
tip 6 0x123456789abcdef0
fup 3 0xffff8000
tip.pgd 0 0
stop
ovf
mnt 0x0123456789abcdef
exstop 0
exstop 1
mwait 0x20 0x1
pwre 2 1 1
raw 02 22 80 21
pwrx 6 2 1 0 0
ptw 0 0xdeadbeef 0
ptw 1 0x0123456789abcdef 1
raw 02 63 82
raw 0c 01 02 03 04
raw 02 63 01
raw 14 01 02 03 04 05 06 07 08
raw 02 b3
raw 02 33
raw 02 13 81 0e
raw 02 53 02 01 02 03 04 05 06 07 08
raw 19 01 02 03 04 05 06 07 00 00 00 00 00 00 00 00 00 00
raw 05 07 02 ff 02 c3 89 99 60
raw 00 00 00 00 00 00 00 00 00 00 00
tip 1 0x1234
raw 02 82 02 82 02 82 02 83
`,
  );
  // buffer 0: every kind; buffer 1: random bytes (a small xorshift, reproducible from its seed)
  let s = 0x9e3779b9;
  const rnd = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const d = await withAux('kinds', (k, size) => {
    if (k === 0) return encoded;
    const b = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      const r = rnd();
      // bias towards real opcodes and zero runs so packets, not only bad bytes, show up
      b[i] = r % 5 === 0 ? 0 : r % 7 === 0 ? 2 : (r >>> 8) & 0xff;
    }
    return b;
  });
  compareWithPerf(t, d);
});

test('--raw, --json and --format=ptdump', (t) => {
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const bytes = libiptEncode(hv.ptEnc, 'raw 00 00\npsb\npsbend\nfup 3 0x1000\ntnt.8 2 1\ntip.pgd 0 0\n');
  const file = join(dir, 'raw.pt');
  writeFileSync(file, bytes);
  const pd = runCli(['pt-dump', '--raw', '-i', file, '--format=ptdump']);
  assert.equal(pd.status, 0, pd.stderr);
  assert.deepEqual(pd.stdout.trimEnd().split('\n'), [...ptdumpLines(bytes)]);
  assert.ok(pd.stdout.includes('0000000000000014  fup        3: 0000000000001000'), pd.stdout);
  const js = runCli(['pt-dump', '--raw', '-i', file, '--json']);
  assert.equal(js.status, 0, js.stderr);
  const objs = js.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    objs.map((o) => o.kind),
    ['pad', 'pad', 'psb', 'psbend', 'fup', 'tnt.8', 'tip.pgd'],
  );
  assert.deepEqual(objs[4], {
    type: 'packet',
    kind: 'fup',
    offset: 20,
    size: 7,
    ipc: 3,
    ip: '0x1000',
    last_ip: '0x1000',
  });
  assert.equal(objs[6]!.last_ip, null, 'tip.pgd with ipc 0: suppressed');
  const perfText = runCli(['pt-dump', '--raw', '-i', '-'], { input: Buffer.from(bytes) });
  assert.match(perfText.stdout, /^\. \.\.\. Intel Processor Trace data: size 29 bytes\n/);
  const bad = runCli(['pt-dump', '--raw', '-i', file, '--format=xml']);
  assert.equal(bad.status, 2);
});

test('loadAuxQueues: one queue per CPU with the buffers perf lists', async () => {
  const { loadAuxQueues } = await import('../src/intelpt/aux-queues.js');
  const f = await PerfFile.open(join(dir, 'sim', 'data'));
  const { queues, info } = await loadAuxQueues(f, { keepData: true });
  await f.close();
  assert.equal(info?.type, 'intel_pt');
  const perf = runPerf(['script', '-D', '-i', join(dir, 'sim')]);
  const want = [
    ...(perf?.stdout ?? '').matchAll(
      /PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+) +offset: (\S+) +ref: (\S+) +idx: (\d+) +tid: (-?\d+) +cpu: (-?\d+)/g,
    ),
  ].map((m) => ({
    size: Number(m[1]),
    offset: BigInt(m[2]!),
    reference: BigInt(m[3]!),
    idx: Number(m[4]),
    tid: Number(m[5]),
    cpu: Number(m[6]),
  }));
  assert.ok(want.length >= 2);
  const got = queues.all().flatMap((q) =>
    q.buffers.map((b) => ({
      size: b.size,
      offset: b.offset,
      reference: b.reference,
      idx: b.idx,
      tid: b.tid,
      cpu: b.cpu,
      q: q.key,
    })),
  );
  for (const w of want)
    assert.ok(
      got.some(
        (g) =>
          g.size === w.size &&
          g.offset === w.offset &&
          g.reference === w.reference &&
          g.cpu === w.cpu &&
          g.q === `cpu:${w.cpu}`,
      ),
      JSON.stringify(w, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
    );
  assert.equal(got.length, want.length);
  for (const b of queues.all().flatMap((x) => x.buffers)) assert.equal(b.data?.length, b.size);
});
