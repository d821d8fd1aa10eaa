/**
 * The brstack, brstacksym and brstackoff fields of `perf script` on samples
 * with a branch stack (LBR), against perf 6.1. This machine has no LBR, so
 * the file is synthetic: a process with libc mapped, samples whose branch
 * entries land in libc, in unmapped user memory and in the kernel, with every
 * flag value (mispred/predicted, in_tx, abort, cycles, each branch type and
 * the extended types), with and without the hardware index.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runPerf } from './cli.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptInProcess } from './script-compare.js';
import { PerfDataWriter } from '../src/perfdata/writer.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { emptyAttr, PerfType, PERF_COUNT_SW_CPU_CLOCK, withAttrFlag } from '../src/abi/event-attr.js';
import { SampleType, PERF_SAMPLE_BRANCH_HW_INDEX } from '../src/abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_USER } from '../src/abi/record-type.js';

const dir = tempDir('perfpoke-brstack-');
const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });
const LIBC = '/usr/lib/x86_64-linux-gnu/libc.so.6';
/** Mapped, but no sample's ip lies in it: perf has not loaded its symbols when brstackoff prints it. */
const LDSO = '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2';
const LDSO_BASE = 0x7f2000000000n;
const PID = 77;
const BASE = 0x7f1000000000n;

export async function branchFile(hwIndex: boolean): Promise<string> {
  const file = join(dir, hwIndex ? 'hwidx.data' : 'lbr.data');
  const attr = emptyAttr();
  attr.type = PerfType.SOFTWARE;
  attr.config = BigInt(PERF_COUNT_SW_CPU_CLOCK);
  attr.samplePeriod = 1000n;
  attr.sampleType = SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.PERIOD | SampleType.BRANCH_STACK;
  attr.branchSampleType = 8n | (hwIndex ? PERF_SAMPLE_BRANCH_HW_INDEX : 0n); // ANY
  for (const f of ['sample_id_all', 'mmap', 'comm', 'task', 'mmap2'] as const) attr.flags = withAttrFlag(attr.flags, f);
  const w = await PerfDataWriter.create(file, [{ attr, ids: [], name: 'cpu-clock' }]);
  let time = 5_000_000n;
  const sid = () => {
    time += 100n;
    return { pid: PID, tid: PID, time };
  };
  const size = BigInt(statSync(LIBC).size);
  const map = (addr: bigint, len: bigint, filename: string): PerfRecord => ({
    kind: 'mmap2',
    ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER),
    pid: PID,
    tid: PID,
    addr,
    len,
    pgoff: 0n,
    maj: 0,
    min: 0,
    ino: 0n,
    inoGeneration: 0n,
    prot: 5,
    flags: 2,
    filename,
    sampleId: sid(),
  });
  const ldSize = BigInt(statSync(LDSO).size);
  const records: PerfRecord[] = [
    { kind: 'comm', ...head(RecordType.COMM), pid: PID, tid: PID, comm: 'lbr', sampleId: sid() },
    map(BASE, size, LIBC),
    map(LDSO_BASE, ldSize, LDSO),
  ];
  let x = 99n;
  const rnd = (): bigint => {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    return x >> 11n;
  };
  const where = (k: bigint): bigint => {
    const r = rnd();
    if (k % 4n === 0n) return BASE + (r % size);
    if (k % 4n === 1n) return 0xffffffff81000000n + (r % 0x100000n);
    // ld.so's code only (its first 128 KiB): past .text perf's symbol ends differ (not modelled for data)
    return k % 4n === 2n ? LDSO_BASE + 0x1100n + (r % 0x20000n) : 0x5000n + k;
  };
  for (let i = 0; i < 120; i++) {
    const entries = Array.from({ length: 1 + (i % 8) }, (_, k) => {
      // mispred/predicted/in_tx/abort, cycles, type (0..15), spec, new_type (0..15)
      const flags =
        (BigInt(i + k) % 16n) | ((rnd() % 70000n) << 4n) | (BigInt((i + k) % 16) << 20n) | ((rnd() % 1024n) << 24n);
      return { from: where(BigInt(i + k)), to: where(BigInt(i * 7 + k)), flags };
    });
    records.push({
      kind: 'sample',
      ...head(RecordType.SAMPLE, PERF_RECORD_MISC_USER),
      ip: BASE + 0x1000n + BigInt(i),
      pid: PID,
      tid: PID,
      time: time + 1000n * BigInt(i + 1),
      period: 1000n,
      branchStack: hwIndex ? { hwIdx: BigInt(i), entries } : { entries },
    });
  }
  for (const r of records) await w.write(r, 0);
  await w.finish();
  return file;
}

test('brstack, brstacksym and brstackoff equal perf script on synthetic branch stacks', async (t) => {
  if (!needTool(t, 'perf')) return;
  assert.ok(existsSync(LIBC), `${LIBC} is needed for the mapped entries`);
  for (const hwIndex of [false, true]) {
    const file = await branchFile(hwIndex);
    for (const args of [
      ['-F', 'ip,brstackoff'],
      ['-F', 'ip,brstack'],
      ['-F', 'ip,dso,brstack'],
      ['-F', 'comm,ip,sym,brstacksym'],
      ['-F', 'ip,sym,dso,brstacksym'],
      ['-F', 'ip,brstackoff'],
      ['-F', 'ip,dso,brstackoff'],
      ['-F', '+brstack'],
    ]) {
      const perf = runPerf(['script', '-i', file, ...args]);
      assert.ok(perf && perf.status === 0, `${args.join(' ')}: ${perf?.stderr.toString()}`);
      const theirs = perf.stdout.toString();
      assert.ok(theirs.split('\n').length > 100, `${args.join(' ')}: perf printed ${theirs.length} bytes`);
      const mine = await scriptInProcess(file, args);
      assert.equal(firstDiff(mine.out, theirs), 'equal', `${hwIndex ? 'hw_idx ' : ''}${args.join(' ')}`);
    }
  }
});
