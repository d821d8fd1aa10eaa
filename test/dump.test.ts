/**
 * `perfpoke dump` against `perf script -D` (perf 6.1) on every recorded
 * fixture and on synthetic files holding every record kind (TEXT_POKE
 * included), both byte orders. Symbol lines (" ... thread:", " ...... dso:")
 * and perf script's own sample lines are dropped from perf's output first:
 * they need symbol resolution, which dump does not do.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runPerf, repoRoot } from './cli.js';
import { dumpToString } from '../src/format/perf-dump.js';
import { fullSampleAttr, fullSamples, writeSynthetic } from './reader-synth.js';
import { fastSampleBytes } from '../src/format/perf-dump-fast.js';
import { ByteText } from '../src/io/byte-text.js';
import { PerfDataWriter } from '../src/perfdata/writer.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER, SampleType } from '../src/abi/sample-format.js';
import { encodeRecordBytes } from '../src/perfdata/records/index.js';
import { encodePipeHeader } from '../src/perfdata/file-header.js';
import { ByteWriter } from '../src/io/byte-writer.js';
import { RecordType } from '../src/abi/record-type.js';
import { cannotCompare } from './require-tool.js';
import { recordLines, SUMMARY } from './perf-dump-lines.js';
import { tempDir } from './temp-dir.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'recorded');
const recorded = readdirSync(fixtures)
  .filter((n) => n.endsWith('.data'))
  .sort();

const perfCache = new Map<string, string | null>();
/** perf script -D of dir/name (memoized: several tests compare against the same file). */
function perfDump(dir: string, name: string): string | null {
  const key = join(dir, name);
  if (perfCache.has(key)) return perfCache.get(key)!;
  const r = runPerf(['script', '-D', '-i', name], { cwd: dir });
  const out = r?.status !== 0 ? null : r.stdout;
  perfCache.set(key, out);
  return out;
}

function firstDiff(a: string[], b: string[]): string {
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) return `line ${i}:\n perf: ${a[i]}\n ours: ${b[i]}`;
  return 'equal';
}

for (const name of recorded) {
  test(`dump --hex of ${name} is perf script -D's text`, async (t) => {
    const perf = perfDump(fixtures, name);
    if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
    const ours = await dumpToString(join(fixtures, name), { hex: true, label: name });
    const p = recordLines(perf);
    const o = recordLines(ours);
    assert.ok(p.filter((l) => SUMMARY.test(l)).length > 10, 'perf printed records');
    assert.deepEqual(o, p, firstDiff(p, o));
  });
}

test('dump without --hex prints exactly perf -D summary and detail lines (file and pipe mode)', async (t) => {
  for (const name of ['sw.data', 'switch.data', 'pipe-tp.data', 'read.data', 'group-read.data']) {
    const perf = perfDump(fixtures, name);
    if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
    const p = recordLines(perf).filter((l) => !/^\.( |$)|^\S+@\S+ \[0x/.test(l));
    const o = (await dumpToString(join(fixtures, name))).split('\n').filter((l) => l !== '');
    assert.deepEqual(o, p, firstDiff(p, o));
  }
});

test(
  'synthetic file with every record kind (TEXT_POKE, KSYMBOL, NAMESPACES, full samples…) matches perf -D, ' +
    'little-endian',
  async (t) => {
    const dir = tempDir('perfpoke-dump-');
    try {
      await writeSynthetic(join(dir, 'synth.data'));
      const perf = perfDump(dir, 'synth.data');
      if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
      const p = recordLines(perf);
      const o = recordLines(await dumpToString(join(dir, 'synth.data'), { hex: true, label: 'synth.data' }));
      for (const kind of [
        'TEXT_POKE',
        'KSYMBOL',
        'BPF_EVENT',
        'NAMESPACES',
        'CGROUP',
        'SWITCH_CPU_WIDE',
        'LOST_SAMPLES',
        'AUX',
        'ITRACE_START',
        'THROTTLE',
      ]) {
        assert.ok(
          p.some((l) => l.includes(`PERF_RECORD_${kind}`)),
          `perf printed ${kind}`,
        );
      }
      assert.ok(
        p.some((l) => l.includes('ftrace_trampoline+0x0 old len 0 new len 11')),
        'perf symbolized the trampoline poke from KSYMBOL',
      );
      assert.deepEqual(o, p, firstDiff(p, o));
      // perf prints the poked bytes on their own lines; so do we
      const ours = await dumpToString(join(dir, 'synth.data'));
      assert.match(
        ours,
        new RegExp(
          String.raw`PERF_RECORD_TEXT_POKE ffffffff81234560 {2}old len 5 new len 5` +
            String.raw`\n {12}Old bytes: 0f 1f 44 00 00\n {12}New bytes: e9 10 20 00 00\n`,
        ),
      );
      assert.match(perf, / {12}Old bytes: 0f 1f 44 00 00\n {12}New bytes: e9 10 20 00 00\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'synthetic big-endian file: same summaries as perf -D (except perf 6.1 swap bugs) and as the ' + 'little-endian twin',
  async (t) => {
    const dir = tempDir('perfpoke-dump-');
    try {
      await writeSynthetic(join(dir, 'be.data'), { bigEndian: true, perfSwappable: true });
      await writeSynthetic(join(dir, 'le.data'), { perfSwappable: true });
      const be = await dumpToString(join(dir, 'be.data'));
      const le = await dumpToString(join(dir, 'le.data'));
      assert.equal(be, le, 'byte order does not change what dump prints');
      const perf = perfDump(dir, 'be.data');
      if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
      // perf 6.1 does not swap MMAP2 prot/flags, EVENT_UPDATE scale or sample_regs_intr's mask: skip those lines
      const perfBug = (l: string) =>
        /PERF_RECORD_MMAP2|\.\.\. scale:|intr regs|^\.\.\.\. (XMM|AX|BX|CX|DX|SI|DI|BP|SP|IP)\b/.test(l);
      const strip = (l: string[]) => l.filter((x) => !/^\.( |$)|^\S+@\S+ \[0x/.test(x) && !perfBug(x));
      const p = strip(recordLines(perf));
      const o = strip(recordLines(be));
      assert.ok(
        p.some((l) => l.includes('PERF_RECORD_TEXT_POKE')),
        'perf read the big-endian TEXT_POKE',
      );
      assert.deepEqual(
        o.filter((l) => !/^\.\.\.\. /.test(l)),
        p.filter((l) => !/^\.\.\.\. /.test(l)),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('dump --json: one object per record, bigints as 0x strings, bytes as hex', () => {
  const r = runCli(['dump', '--json', '--order', 'file', '-i', join(fixtures, 'bpf.data')]);
  assert.equal(r.status, 0, r.stderr);
  const recs = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const perf = perfDump(fixtures, 'bpf.data');
  if (perf !== null) assert.equal(recs.length, perf.split('\n').filter((l) => SUMMARY.test(l)).length);
  const k = recs.find((x) => x.kind === 'ksymbol')!;
  assert.match(String(k.addr), /^0x[0-9a-f]+$/);
  const b = recs.find((x) => x.kind === 'bpf_event')!;
  assert.match(String(b.tag), /^[0-9a-f]{16}$/);
  assert.ok(recs.every((x) => typeof x.offset === 'number' && typeof x.name === 'string'));
});

test('dump reads a pipe from stdin like perf does', (t) => {
  const perf = perfDump(fixtures, 'pipe.data');
  if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
  const input = readFileSyncBuf(join(fixtures, 'pipe.data'));
  const r = runCli(['dump', '-i', '-'], { input });
  assert.equal(r.status, 0, r.stderr);
  const p = recordLines(perf).filter((l) => !/^\.( |$)|^\S+@\S+ \[0x/.test(l));
  assert.deepEqual(
    r.stdout.split('\n').filter((l) => l !== ''),
    p,
  );
});

test('dump --text-poke-abi=rfc reads type 19 as the seed RFC poke; final reads it as CGROUP', async () => {
  const dir = tempDir('perfpoke-dump-');
  try {
    const w = new ByteWriter(true);
    encodePipeHeader(w);
    w.bytes(
      encodeRecordBytes(
        {
          kind: 'text_poke',
          abi: 'rfc',
          type: RecordType.CGROUP,
          misc: 1,
          size: 0,
          fileOffset: 0,
          addr: 0xffffffff81000010n,
          len: 2,
          oldBytes: new Uint8Array([0x66, 0x90]),
          newBytes: new Uint8Array([0xeb, 0x05]),
        },
        true,
      ),
    );
    const f = join(dir, 'rfc.data');
    writeFileSync(f, w.finish());
    const rfc = await dumpToString(f, { textPokeAbi: 'rfc' });
    assert.match(
      rfc,
      /PERF_RECORD_TEXT_POKE ffffffff81000010 {2}len 2 \(RFC ABI\)\n {12}Old bytes: 66 90\n {12}New bytes: eb 05/,
    );
    const fin = await dumpToString(f);
    assert.match(fin, /PERF_RECORD_CGROUP cgroup: 18446744071578845200 /);
    const bad = runCli(['dump', '--text-poke-abi=v2', '-i', f]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--text-poke-abi: expected final or rfc/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('dump of a corrupt file: one FormatError line naming the offset, exit 2', () => {
  const dir = tempDir('perfpoke-dump-');
  try {
    const b = readFileSyncBuf(join(fixtures, 'sw.data'));
    // zero the header.size of the record at 0x158 (the kernel MMAP): perf would loop forever
    b.writeUInt16LE(0, 0x158 + 6);
    const f = join(dir, 'bad.data');
    writeFileSync(f, b);
    const r = runCli(['dump', '-i', f]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /at offset 0x158: MMAP \(1\) perf_event_header.size: size 0, expected ≥ 8/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

import { readFileSync } from 'node:fs';
function readFileSyncBuf(p: string): Buffer {
  return readFileSync(p);
}

test(
  'committed text-poke fixtures (synthetic/): dump equals perf -D; the big-endian twin dumps the ' + 'same',
  async (t) => {
    const dir = join(fixtures, 'synthetic');
    const perf = perfDump(dir, 'text-poke.data');
    if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
    const p = recordLines(perf);
    assert.equal(p.filter((l) => l.includes('PERF_RECORD_TEXT_POKE')).length, 3);
    const o = recordLines(await dumpToString(join(dir, 'text-poke.data'), { hex: true, label: 'text-poke.data' }));
    assert.deepEqual(o, p, firstDiff(p, o));
    const be = (await dumpToString(join(dir, 'text-poke-be.data'))).split('\n');
    const le = (await dumpToString(join(dir, 'text-poke.data'))).split('\n');
    const pokes = (x: string[]) => x.filter((l) => l.includes('TEXT_POKE'));
    // the big-endian twin has no KSYMBOL (perf 6.1 cannot swap it), so no trampoline symbol either
    const bare = (l: string) =>
      l.replace(/^\S+ \S+ 0x[0-9a-f]+ /, '').replace(/ \S+\+0x[0-9a-f]+ old len/, '  old len');
    assert.deepEqual(pokes(be).map(bare), pokes(le).map(bare));
    const perfBe = perfDump(dir, 'text-poke-be.data');
    assert.ok(perfBe !== null);
    assert.deepEqual(pokes(be), pokes(perfBe.split('\n')), 'perf reads our big-endian pokes the same');
  },
);

test(
  'an intel_pt file (from the PT simulator): AUXTRACE_INFO fields and every packet line as perf -D prints ' + 'them',
  async (t) => {
    const { simulate } = await import('../src/sim/simulate.js');
    const dir = tempDir('perfpoke-dump-pt-');
    try {
      simulate({ out: join(dir, 'sim'), seed: 1, cpus: 2, flips: 2, size: 2000 });
      const perf = perfDump(join(dir, 'sim'), 'data');
      if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
      // perf names kernel-text pokes with this host's kallsyms (the file maps [kernel.kallsyms]); dump does not
      const noSym = (l: string) =>
        l.replace(/(PERF_RECORD_TEXT_POKE [0-9a-f]+) \S+\+0x[0-9a-f]+ old len/, '$1  old len');
      const keep = (text: string) => recordLines(text).concat().filter(Boolean);
      const pt = (text: string) =>
        text.split('\n').filter((l) => /^ {2}[A-Z]|^\. \.\.\. Intel Processor Trace data|^\. {2}[0-9a-f]{8}: /.test(l));
      const ours = await dumpToString(join(dir, 'sim', 'data'), { hex: true, label: 'data' });
      assert.deepEqual(keep(ours), keep(perf).map(noSym));
      const p = pt(perf);
      assert.ok(p.length > 500, 'perf listed the PT packets');
      assert.deepEqual(pt(ours), p);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/**
 * The samples perf record usually writes (no READ/RAW/regs/user stack) are
 * printed from their bytes by src/format/perf-dump-fast.ts: every field it
 * handles, edge values (u64 halves, times past 2^53, zero ip/addr, empty and
 * long callchains) and both byte orders, against perf -D.
 */
test('samples printed from their bytes (the fast path) equal perf -D, both byte orders', async (t) => {
  const dir = tempDir('perfpoke-dump-fast-');
  try {
    const attr = fullSampleAttr();
    attr.sampleType &= ~(
      SampleType.READ |
      SampleType.RAW |
      SampleType.REGS_USER |
      SampleType.STACK_USER |
      SampleType.REGS_INTR
    );
    const noPeriod = fullSampleAttr();
    noPeriod.sampleType =
      SampleType.IDENTIFIER | SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CALLCHAIN;
    noPeriod.samplePeriod = 4000n;
    const big = (hi: number, lo: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);
    const samples: PerfRecord[] = [];
    for (let k = 0; k < 6; k++) {
      const base = fullSamples()[k % 3]! as Extract<PerfRecord, { kind: 'sample' }>;
      const { read: _r, raw: _w, regsUser: _u, stackUser: _s, regsIntr: _i, ...s } = base;
      samples.push({
        ...s,
        ip: k === 1 ? 0n : k === 2 ? big(0xffffffff, 0x81000000) : big(0, 0x4010 + k),
        addr: k === 3 ? 0n : big(0x7ffd, k),
        time: k === 4 ? (1n << 60n) + 7n : 2_000_000n + BigInt(k) * 10n,
        period: k === 5 ? (1n << 63n) + 1n : BigInt(1000 * k + 1),
        weight: k === 2 ? 1n << 55n : BigInt(k),
        dataSrc: big(k, 0x68100142),
        transaction: big(0x1, k),
        physAddr: big(0x12, 0x345000 + k),
        dataPageSize: k === 0 ? 0n : k === 3 ? 1024n : k === 4 ? 5000n : 4096n << BigInt(k),
        codePageSize: k === 1 ? 3n : 2n * 1024n * 1024n,
        callchain:
          k === 0
            ? []
            : Array.from({ length: k === 5 ? 127 : k * 3 }, (_, i) =>
                i === 0 ? PERF_CONTEXT_KERNEL : big(0xffffffff, 0x81000000 + i * 0x10001),
              ),
      });
    }
    samples.push({
      kind: 'sample',
      type: RecordType.SAMPLE,
      misc: 2,
      size: 0,
      fileOffset: 0,
      ip: 0x401000n,
      pid: -1,
      tid: 0,
      time: 3_000_000n,
      identifier: 505n,
      callchain: [PERF_CONTEXT_USER, 0x401000n],
    });
    for (const be of [false, true]) {
      const name = be ? 'fast-be.data' : 'fast-le.data';
      const w = await PerfDataWriter.create(
        join(dir, name),
        [
          { attr, ids: [202n], name: 'cpu-clock' },
          { attr: noPeriod, ids: [505n], name: 'task-clock' },
        ],
        { bigEndian: be },
      );
      for (const r of samples) await w.write(r, r.kind === 'sample' && r.identifier === 505n ? 1 : 0);
      await w.finish();
    }
    const f = await PerfFile.open(join(dir, 'fast-le.data'));
    let fast = 0;
    for await (const r of f.records())
      if (r.type === RecordType.SAMPLE && fastSampleBytes(new ByteText(), r, true, true, 0)) fast++;
    await f.close();
    assert.equal(fast, samples.length, 'every sample took the fast path');
    const le = await dumpToString(join(dir, 'fast-le.data'), { hex: true, label: 'fast-le.data' });
    const be = await dumpToString(join(dir, 'fast-be.data'));
    const noHex = (l: string[]) => l.filter((x) => !/^\.( |$)|^\S+@\S+ \[0x/.test(x));
    assert.deepEqual(noHex(recordLines(be)), noHex(recordLines(le)), 'byte order does not change the text');
    const perf = perfDump(dir, 'fast-le.data');
    if (perf === null) return cannotCompare(t, 'perf 6.1 not available');
    const p = recordLines(perf);
    const o = recordLines(le);
    assert.ok(p.filter((l) => l.includes('PERF_RECORD_SAMPLE')).length === samples.length, 'perf printed every sample');
    assert.ok(p.some((l) => l.includes('code page size')) && p.some((l) => l.includes('transaction')));
    assert.deepEqual(o, p, firstDiff(p, o));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
