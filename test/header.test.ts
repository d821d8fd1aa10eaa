import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { runCli, runPerf, repoRoot } from './cli.js';
import { headerLines } from '../src/format/perf-header.js';
import { copyPerfData } from '../src/perfdata/writer-copy.js';
import { readFileFeatures } from '../src/perfdata/features/index.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';

/** Every recorded fixture we can find: ours and the reader's. */
function fixtures(): string[] {
  const out: string[] = [];
  for (const d of ['test/fixtures/features', 'test/fixtures/recorded']) {
    const dir = join(repoRoot, d);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith('.data')) out.push(join(dir, f));
  }
  return out;
}

test('perfpoke header prints what perf report --header-only prints, line by line', async (t) => {
  if (!needTool(t, 'perf')) return;
  const files = fixtures();
  assert.ok(files.length >= 5);
  for (const f of files) {
    // -I prints everything; the short form differs only in the full-only features, checked on our own fixtures
    for (const full of f.includes('/features/') ? [[], ['-I']] : [['-I']]) {
      const perf = runPerf(['report', '--header-only', ...full, '-i', f])!;
      if (perf.status !== 0) continue; // a deliberately broken fixture of the reader's
      // our side in-process (the CLI itself is run by the tests below)
      const ours = `${headerLines(await readFileFeatures(f), statSync(f).mtime, full.length > 0).join('\n')}\n`;
      assert.deepEqual(ours.split('\n'), perf.stdout.split('\n'), `${f} ${full.join('')}`);
    }
  }
});

test('big-endian files: the same lines as perf', async (t) => {
  if (!needTool(t, 'perf')) return;
  const dir = tempDir('perfpoke-header-be-');
  for (const fx of ['features/group-clock.data', 'features/system.data', 'recorded/bpf.data']) {
    const be = join(dir, 'be.data');
    await copyPerfData(join(repoRoot, 'test/fixtures', fx), be, { bigEndian: true });
    const perf = runPerf(['report', '--header-only', '-I', '-i', be])!;
    assert.equal(perf.status, 0, perf.stderr);
    const ours = `${headerLines(await readFileFeatures(be), statSync(be).mtime, true).join('\n')}\n`;
    // perf 6.1's perf_event__attr_swap leaves attr.clockid unswapped: it prints clockid = 16777216 for 1.
    // Documented in docs/header.md; compare the rest of those lines.
    const norm = (x: string) => x.replace(/, clockid = \d+/g, ', clockid = N').split('\n');
    assert.deepEqual(norm(ours), norm(perf.stdout), fx);
    assert.match(ours, fx.includes('group-clock') ? /clockid = 1\n/ : /./);
  }
});

test('the CLI prints the same as perf for a pipe-mode file (-I)', (t) => {
  if (!needTool(t, 'perf')) return;
  const f = join(repoRoot, 'test/fixtures/features/pipe.data');
  const r = runCli(['header', '-I', '-i', f]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, runPerf(['report', '--header-only', '-I', '-i', f])!.stdout);
});

test('perfpoke header --json gives decoded features', () => {
  const r = runCli(['header', '--json', '-i', join(repoRoot, 'test/fixtures/features/group-clock.data')]);
  assert.equal(r.status, 0, r.stderr);
  const [head, ...features] = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; name: string; byte_order?: string; value: Record<string, unknown> });
  assert.equal(head!.type, 'file_header');
  assert.equal(head!.byte_order, 'little');
  assert.ok(features.every((f) => f.type === 'feature'));
  const byName = new Map(features.map((f) => [f.name, f.value]));
  assert.deepEqual(byName.get('GROUP_DESC')!.groups, [{ name: '{anon_group}', leaderIdx: 0, nrMembers: 2 }]);
  const cd = byName.get('CLOCK_DATA')!;
  assert.equal(cd.clockid, 1);
  assert.match(String(cd.todNs), /^0x[0-9a-f]+$/);
});

test('a corrupt feature table is one line naming the offset, exit 2', () => {
  const src = readFileSync(join(repoRoot, 'test/fixtures/features/basic.data'));
  const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const featAt = Number(dv.getBigUint64(40, true) + dv.getBigUint64(48, true));
  const bad = Buffer.from(src);
  // OSRELEASE size (BUILD_ID is entry 0)
  new DataView(bad.buffer, bad.byteOffset).setBigUint64(featAt + 16 * 2 + 8, 0xfffffffn, true);
  const dir = tempDir('perfpoke-header-');
  const f = join(dir, 'bad.data');
  writeFileSync(f, bad);
  const r = runCli(['header', '-i', f]);
  assert.equal(r.status, 2);
  assert.match(
    r.stderr,
    new RegExp(`at offset 0x${(featAt + 32).toString(16)}: feature section table entry OSRELEASE`),
  );
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

test(
  'features this machine never records (pmu caps, hybrid, caches, NUMA nodes…): perf reads what we write ' +
    'and prints what we print',
  async (t) => {
    if (!needTool(t, 'perf')) return;
    const { PerfDataWriter } = await import('../src/perfdata/writer.js');
    const { emptyAttr, withAttrFlag } = await import('../src/abi/event-attr.js');
    const { RecordType } = await import('../src/abi/record-type.js');
    const attr = (config: bigint) => ({
      ...emptyAttr(),
      type: 1,
      size: 128,
      config,
      samplePeriod: 1000n,
      sampleType: 0xc7n,
      flags: withAttrFlag(0n, 'sample_id_all'),
    });
    const features = [
      { kind: 'nrcpus', avail: 4, online: 3 },
      { kind: 'cmdline', argv: ['/usr/bin/perf', 'record', "it's", '-e', '{a,b}'] },
      { kind: 'cpu_topology', cores: ['0-3'], threads: ['0-1', '2-3'] },
      {
        kind: 'numa_topology',
        nodes: [
          { node: 0, memTotal: 1000n, memFree: 10n, cpus: '0,1' },
          { node: 1, memTotal: 2000n, memFree: 20n, cpus: '2-3' },
        ],
      },
      {
        kind: 'pmu_mappings',
        pmus: [
          { type: 4, name: 'cpu' },
          { type: 8, name: 'intel_pt' },
        ],
      },
      { kind: 'group_desc', groups: [{ name: 'grp', leaderIdx: 0, nrMembers: 2 }] },
      {
        kind: 'cache',
        version: 1,
        levels: [
          { level: 1, lineSize: 64, sets: 64, ways: 8, type: 'Data', size: '32K', map: '0-1' },
          { level: 3, lineSize: 64, sets: 8192, ways: 16, type: 'Unified', size: '8192K', map: '0-3' },
        ],
      },
      { kind: 'sample_time', first: 1_500_000_000n, last: 2_750_123_456n },
      {
        kind: 'mem_topology',
        version: 1n,
        blockSize: 0x8000000n,
        nodes: [
          { node: 0n, size: 40n, bits: 40n, words: [0xff0fn] },
          { node: 1n, size: 130n, bits: 130n, words: [0n, 0n, 3n] },
        ],
      },
      { kind: 'clockid', resNs: 1n },
      { kind: 'compressed', version: 1, type: 1, level: 3, ratio: 5, mmapLen: 528384 },
      {
        kind: 'cpu_pmu_caps',
        caps: [
          { name: 'branches', value: '32' },
          { name: 'max_precise', value: '3' },
        ],
      },
      {
        kind: 'clock_data',
        version: 1,
        clockid: 0,
        todNs: 1_700_000_000_123_456_789n,
        clockidNs: 1_700_000_000_123_456_000n,
      },
      {
        kind: 'hybrid_topology',
        nodes: [
          { pmuName: 'cpu_core', cpus: '0-1' },
          { pmuName: 'cpu_atom', cpus: '2-3' },
        ],
      },
      {
        kind: 'pmu_caps',
        pmus: [
          { caps: [{ name: 'max_precise', value: '0' }], pmuName: 'ibs_op' },
          { caps: [], pmuName: 'msr' },
        ],
      },
      { kind: 'branch_stack' },
      { kind: 'stat' },
    ] as const;
    const dir = tempDir('perfpoke-header-synth-');
    for (const bigEndian of [false, true]) {
      const out = join(dir, 'synth.data');
      const w = await PerfDataWriter.create(
        out,
        [
          { attr: attr(0n), ids: [1n], name: 'cpu-clock' },
          { attr: attr(1n), ids: [2n], name: 'task-clock' },
        ],
        { bigEndian, features: features as never },
      );
      await w.write({ kind: 'finished_round', type: RecordType.FINISHED_ROUND, misc: 0, size: 0, fileOffset: 0 });
      await w.finish();
      for (const full of [true, false]) {
        const perf = runPerf(['report', '--header-only', ...(full ? ['-I'] : []), '-i', out])!;
        assert.equal(perf.status, 0, perf.stderr);
        const ours = `${headerLines(await readFileFeatures(out), statSync(out).mtime, full).join('\n')}\n`;
        assert.deepEqual(ours.split('\n'), perf.stdout.split('\n'), `${bigEndian ? 'BE' : 'LE'} ${full ? '-I' : ''}`);
      }
    }
  },
);

test('BPF_PROG_INFO names from BTF func_info, and BPF_BTF, as perf (libbpf) prints them', async (t) => {
  if (!needTool(t, 'perf')) return;
  const { PerfDataWriter } = await import('../src/perfdata/writer.js');
  const { ByteWriter } = await import('../src/io/byte-writer.js');
  const { emptyAttr } = await import('../src/abi/event-attr.js');
  // BTF: [1] FUNC_PROTO void(void), [2] FUNC perfpoke_fn, [3] FUNC perfpoke_sub
  const strs = Buffer.from('\0perfpoke_fn\0perfpoke_sub\0', 'latin1');
  const bt = new ByteWriter(true);
  bt.u16(0xeb9f).u8(1).u8(0).u32(24).u32(0).u32(36).u32(36).u32(strs.length);
  bt.u32(0)
    .u32(13 << 24)
    .u32(0);
  bt.u32(1)
    .u32(12 << 24)
    .u32(1);
  bt.u32(13)
    .u32(12 << 24)
    .u32(1);
  bt.bytes(strs);
  const btf = bt.finish().slice();
  const prog = (id: number, name: string, btfId: number, ksyms: bigint[], tags: string[]) => {
    const n = ksyms.length;
    const d = new ByteWriter(true);
    const ksymsAt = d.pos;
    for (const k of ksyms) d.u64(k);
    const lensAt = d.pos;
    ksyms.forEach((_, i) => {
      d.u32(0x40 + i * 8);
    });
    d.alignTo(8);
    const finfoAt = d.pos;
    if (btfId) {
      ksyms.forEach((_, i) => {
        d.u32(i * 4).u32(2 + i);
      });
    }
    const tagsAt = d.pos;
    for (const x of tags) d.bytes(Buffer.from(x, 'hex'));
    const data = d.finish().slice();
    const info = new Uint8Array(192);
    const iv = new DataView(info.buffer);
    iv.setUint32(4, id, true);
    info.set(Buffer.from(name, 'latin1'), 64);
    iv.setUint32(104, n, true);
    iv.setUint32(108, n, true);
    iv.setBigUint64(112, BigInt(ksymsAt), true);
    iv.setBigUint64(120, BigInt(lensAt), true);
    iv.setUint32(128, btfId, true);
    iv.setUint32(132, btfId ? 8 : 0, true);
    iv.setBigUint64(136, BigInt(finfoAt), true);
    iv.setUint32(144, btfId ? n : 0, true);
    iv.setUint32(180, n, true);
    iv.setBigUint64(184, BigInt(tagsAt), true);
    const arrays = (1n << 3n) | (1n << 4n) | (1n << 8n) | (btfId ? 1n << 5n : 0n);
    return { info, data, arrays };
  };
  const progs = [
    prog(42, 'progA', 7, [0xffffffffc0001000n, 0xffffffffc0001100n], ['0102030405060708', '1112131415161718']),
    prog(43, 'progB', 0, [0xffffffffc0002000n], ['2122232425262728']),
  ];
  const pi = new ByteWriter(true).u32(progs.length);
  for (const p of progs) pi.u32(p.info.length).u32(p.data.length).u64(p.arrays).bytes(p.info).bytes(p.data);
  const bb = new ByteWriter(true).u32(1).u32(7).u32(btf.length).bytes(btf);
  const out = join(tempDir('perfpoke-header-bpf-'), 'bpf.data');
  const w = await PerfDataWriter.create(
    out,
    [{ attr: { ...emptyAttr(), type: 1, size: 128, config: 9n }, ids: [], name: 'dummy' }],
    {
      features: [
        { kind: 'raw', id: 25, bytes: pi.finish().slice() },
        { kind: 'raw', id: 26, bytes: bb.finish().slice() },
      ],
    },
  );
  await w.write({ kind: 'finished_round', type: 68, misc: 0, size: 0, fileOffset: 0 });
  await w.finish();
  const perf = runPerf(['report', '--header-only', '-i', out])!;
  assert.equal(perf.status, 0, perf.stderr);
  assert.equal(perf.stderr, '');
  assert.match(
    perf.stdout,
    /bpf_prog_0102030405060708_perfpoke_fn/,
    'perf resolved the BTF name (the test data is right)',
  );
  const ours = `${headerLines(await readFileFeatures(out), statSync(out).mtime, false).join('\n')}\n`;
  assert.deepEqual(ours.split('\n'), perf.stdout.split('\n'));
});
