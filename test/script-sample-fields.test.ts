/**
 * `perf script`'s sample columns past the basic ones (misc, data_src,
 * weight, ins_lat, iregs, uregs, insnlen, insn, phys_addr, data_page_size,
 * code_page_size), against perf 6.1: on a synthetic raw-event file whose
 * samples carry every data_src field value (this machine has no PEBS to
 * record them), every cpumode (perf drops guest samples), both weight
 * layouts; and live on recordings perf makes here with -d, -W,
 * --data-page-size, --code-page-size, --intr-regs and --user-regs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runPerf } from './cli.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptInProcess } from './script-compare.js';
import { PerfDataWriter } from '../src/perfdata/writer.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { emptyAttr, PerfType, withAttrFlag, type EventAttr } from '../src/abi/event-attr.js';
import { SampleType } from '../src/abi/sample-format.js';
import { RecordType } from '../src/abi/record-type.js';

const dir = tempDir('perfpoke-sample-fields-');
const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });

/** perf record … -- the workload, into dir/name; the recording's path. */
function record(name: string, opts: string[], work: string[]): string {
  const file = join(dir, name);
  const r = runPerf(['record', '-q', '-o', file, ...opts, '--', ...work]);
  assert.ok(r && r.status === 0, r?.stderr.toString());
  return file;
}

/** `perf script` and `perfpoke script` with the same options on file: equal, and perf printed something. */
async function sameAsPerf(file: string, args: string[], minBytes = 1000): Promise<void> {
  const perf = runPerf(['script', '-i', file, ...args]);
  assert.ok(perf && perf.status === 0, `${args.join(' ')}: ${perf?.stderr.toString()}`);
  const theirs = perf.stdout.toString();
  assert.ok(theirs.length > minBytes, `${args.join(' ')}: perf printed ${theirs.length} bytes`);
  const mine = await scriptInProcess(file, args);
  assert.equal(firstDiff(mine.out, theirs), 'equal', args.join(' '));
}

function sampleAttr(type: number, weight: bigint): EventAttr {
  const a = emptyAttr();
  a.type = type;
  a.config = type === PerfType.RAW ? 0x1cdn : 0n;
  a.samplePeriod = 1000n;
  a.sampleType =
    SampleType.IDENTIFIER |
    SampleType.IP |
    SampleType.TID |
    SampleType.TIME |
    SampleType.ADDR |
    SampleType.CPU |
    SampleType.PERIOD |
    weight |
    SampleType.DATA_SRC |
    SampleType.PHYS_ADDR |
    SampleType.DATA_PAGE_SIZE |
    SampleType.CODE_PAGE_SIZE |
    SampleType.REGS_INTR |
    SampleType.REGS_USER;
  a.sampleRegsIntr = 0x1ffn; // AX..IP
  a.sampleRegsUser = 0xff0000000001n; // AX, then XMM0..XMM7's halves
  a.flags = withAttrFlag(a.flags, 'sample_id_all');
  return a;
}

/** data_src values: each field through its bits alone, then mixes drawn from a fixed LCG. */
function dataSrcValues(): bigint[] {
  const fields: [number, number][] = [
    [0, 5],
    [5, 14],
    [19, 5],
    [24, 2],
    [26, 7],
    [33, 4],
    [37, 1],
    [38, 2],
    [40, 3],
    [43, 3],
  ];
  const out: bigint[] = [0n];
  for (const [shift, width] of fields)
    for (let v = 1; v < 1 << width; v = width > 5 ? v * 2 + (v & 1) : v + 1) out.push(BigInt(v) << BigInt(shift));
  let x = 12345n;
  for (let i = 0; i < 300; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    out.push(x >> 18n);
  }
  return out;
}

export async function syntheticFile(): Promise<string> {
  const file = join(dir, 'fields.data');
  const attrs = [
    { attr: sampleAttr(PerfType.RAW, SampleType.WEIGHT_STRUCT), ids: [11n], name: 'cpu/mem-loads/' },
    { attr: sampleAttr(PerfType.HARDWARE, SampleType.WEIGHT), ids: [22n], name: 'cycles' },
  ];
  const w = await PerfDataWriter.create(file, attrs);
  await w.write({ kind: 'comm', ...head(RecordType.COMM), pid: 7, tid: 7, comm: 'fields', sampleId: {} }, 0);
  let time = 1_000_000n;
  const ds = dataSrcValues();
  for (let i = 0; i < ds.length; i++) {
    time += 1234n;
    const big = BigInt(i) * 0x9e3779b97f4a7c15n;
    const rec: PerfRecord = {
      kind: 'sample',
      ...head(RecordType.SAMPLE, 1 + (i % 5)),
      identifier: i % 2 ? 22n : 11n,
      ip: 0xffffffff81000000n + BigInt(i * 16),
      pid: 7,
      tid: 7,
      time,
      addr: big & 0xffffffffffffn,
      cpu: i % 3,
      cpuRes: 0,
      period: BigInt(1000 + i),
      weight: (big >> 3n) & ((1n << 64n) - 1n),
      dataSrc: ds[i]!,
      physAddr: big & 0xfffffffffn,
      dataPageSize: [0n, 4096n, 2n << 20n, 1n << 30n, 3n, 1024n][i % 6]!,
      codePageSize: [4096n, 0n, 8192n][i % 3]!,
      regsIntr: { abi: 2n, regs: Array.from({ length: 9 }, (_, k) => BigInt(i * 100 + k)) },
      regsUser:
        i % 4 === 0 ? { abi: 0n, regs: [] } : { abi: 2n, regs: Array.from({ length: 17 }, (_, k) => BigInt(k)) },
    };
    await w.write(rec, i % 2);
  }
  await w.finish();
  return file;
}

test('synthetic samples: every data_src, weight layout, misc and register column equals perf script', async (t) => {
  if (!needTool(t, 'perf')) return;
  const file = await syntheticFile();
  const optionSets = [
    [],
    ['-F', '+misc,+iregs,+uregs'],
    ['-F', 'raw:misc,data_src,weight,ins_lat,phys_addr,data_page_size,code_page_size'],
    ['-F', 'comm,pid,tid,cpu,misc,time,event,ip,iregs,uregs', '--ns'],
    ['-F', 'raw:data_src,ip', '-F', 'hw:weight,phys_addr,misc'],
  ];
  for (const args of optionSets) await sameAsPerf(file, args, 10_000);
});

test('a field the event does not record is perf error, named', async (t) => {
  if (!needTool(t, 'perf')) return;
  const file = join(dir, 'fields.data');
  const cpuClock = join(dir, 'noweight.data');
  const a = sampleAttr(PerfType.SOFTWARE, 0n);
  a.sampleType &= ~(SampleType.PHYS_ADDR | SampleType.REGS_USER);
  const w = await PerfDataWriter.create(cpuClock, [{ attr: a, ids: [5n], name: 'cpu-clock' }]);
  const one = { kind: 'sample', ...head(RecordType.SAMPLE, 1), identifier: 5n, ip: 1n, pid: 1, tid: 1, time: 1n };
  await w.write({ ...one, addr: 0n, cpu: 0, cpuRes: 0, period: 1n, dataSrc: 0n, dataPageSize: 0n } as PerfRecord, 0);
  await w.finish();
  for (const [f, args] of [
    [cpuClock, ['-F', 'ip,weight']],
    [cpuClock, ['-F', 'ip,phys_addr']],
    [cpuClock, ['-F', 'ip,uregs']],
    [file, ['-F', 'cycles:ins_lat']],
  ] as const) {
    const perf = runPerf(['script', '-i', f, ...args]);
    const mine = await scriptInProcess(f, [...args]);
    assert.ok(perf && perf.status !== 0, `${args.join(' ')}: perf accepted it`);
    const theirs = perf.stderr.toString().split('\n');
    const ours = mine.err?.replace(/^perfpoke: /, '').trim() ?? '(no error)';
    assert.ok(theirs.includes(ours), `${args.join(' ')}: ours ${ours}, perf:\n${theirs.join('\n')}`);
  }
});

test('live recordings with data_src/weight/page sizes and registers equal perf script', async (t) => {
  if (!needTool(t, 'perf')) return;
  const work = ['sh', '-c', 'ls -R /usr/lib/python3* > /dev/null; seq 20000 | sort -R > /dev/null'];
  const mem = record(
    'mem.data',
    ['-e', 'cpu-clock', '-c', '20000', '-d', '-W', '--data-page-size', '--code-page-size'],
    work,
  );
  const regs = record(
    'regs.data',
    ['-e', 'cpu-clock', '-c', '20000', '--intr-regs=ax,bx,sp,ip', '--user-regs=ip,sp,r15', '-g'],
    work,
  );
  await sameAsPerf(mem, ['-F', '+misc,+data_src,+weight,+ins_lat,+data_page_size,+code_page_size']);
  await sameAsPerf(mem, ['-F', 'comm,tid,misc,ip,sym,dso,insnlen,insn', '--show-mmap-events', '--show-task-events']);
  await sameAsPerf(regs, ['-F', '+iregs,+uregs']);
  await sameAsPerf(regs, ['-F', 'ip,sym,iregs,uregs,insnlen', '-G']);
});

test('--reltime, --deltatime and the tod field (perf record -k) equal perf script', async (t) => {
  if (!needTool(t, 'perf')) return;
  const file = record(
    'clock.data',
    ['-k', 'CLOCK_MONOTONIC', '-e', 'cpu-clock', '-c', '50000'],
    ['sh', '-c', 'ls -R /usr/share/doc > /dev/null'],
  );
  await sameAsPerf(file, ['--reltime']);
  await sameAsPerf(file, ['--deltatime', '--ns']);
  await sameAsPerf(file, ['--reltime', '--show-task-events', '--show-mmap-events', '-F', '+misc']);
  await sameAsPerf(file, ['-F', 'comm,tod,time,ip,sym']);
  await sameAsPerf(file, ['-F', '+tod', '--ns', '--deltatime', '--show-task-events']);
  const mine = await scriptInProcess(file, ['--reltime', '--deltatime']);
  assert.match(mine.err ?? '', /reltime and deltatime - the two don't get along well/);
});

test('srcline (addr2line on the mapped files, perf fallbacks) equals perf script', async (t) => {
  if (!needTool(t, 'perf') || !needTool(t, 'objdump')) return; // objdump: binutils, which has addr2line
  const file = record(
    'srcline.data',
    ['-e', 'cpu-clock', '-c', '100000', '-g'],
    ['sh', '-c', 'ls -R /usr/share/doc > /dev/null; seq 30000 | sort -R > /dev/null'],
  );
  for (const args of [
    ['-F', 'ip,sym,srcline', '-G'],
    ['-F', '+srcline'],
    ['-F', 'comm,ip,dso,srcline'],
  ])
    await sameAsPerf(file, args);
  const perf = runPerf(['script', '-i', file, '-F', 'ip,srcline', '-G'])?.stdout.toString() ?? '';
  assert.match(perf, /\n {2}\S+(\.c:\d+|\[[0-9a-f]+\])\n/, 'perf printed srclines');
});
