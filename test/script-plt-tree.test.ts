/**
 * Symbols that overlap in a real binary, named as perf 6.1 names them: node's
 * zero-size `_init`, which perf's fixup extends over `.plt`, and the 486
 * `name@plt` entries perf then inserts inside it. Which one a lookup returns
 * depends on the shape of perf's red-black tree (src/machine/symbol-tree.ts
 * replays it); the rule used before ("the covering symbol wins") printed
 * `_init+0x…` for every entry here. A synthetic file: one executable map of
 * the running node binary and a sample at each PLT entry and in `_init`,
 * against `perf script`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { realpathSync, statSync } from 'node:fs';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptBoth, userSample } from './script-compare.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { emptyAttr, PerfType, PERF_COUNT_SW_CPU_CLOCK, withAttrFlag } from '../src/abi/event-attr.js';
import { SampleType } from '../src/abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_USER } from '../src/abi/record-type.js';
import { pltSymbols } from '../src/machine/elf-plt.js';
import { readBytes } from '../src/machine/symbol-sources.js';
import { elfSections } from '../src/machine/elf-sections.js';

const dir = tempDir('perfpoke-plt-tree-');
const PID = 4343;
const BASE = 0x555555554000n;
const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });

test('PLT entries inside an extended _init (node): named as perf names them', async (t) => {
  if (!needTool(t, 'perf')) return;
  const exe = realpathSync(process.execPath);
  const bytes = readBytes(exe)!;
  const plt = pltSymbols(bytes);
  const init = elfSections(bytes)?.secs.find((s) => s.name === '.init');
  assert.ok(plt.length > 100 && init, `${exe}: ${plt.length} PLT entries, .init ${init ? 'found' : 'missing'}`);
  const attr = emptyAttr();
  attr.type = PerfType.SOFTWARE;
  attr.config = BigInt(PERF_COUNT_SW_CPU_CLOCK);
  attr.samplePeriod = 1000n;
  attr.sampleType = SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.PERIOD;
  for (const f of ['sample_id_all', 'mmap', 'comm', 'task', 'mmap2'] as const) attr.flags = withAttrFlag(attr.flags, f);
  let time = 1_000_000n;
  const tick = (): bigint => {
    time += 1000n;
    return time;
  };
  const st = statSync(exe);
  const records: PerfRecord[] = [
    {
      kind: 'comm',
      ...head(RecordType.COMM),
      pid: PID,
      tid: PID,
      comm: 'node',
      sampleId: { pid: PID, tid: PID, time: tick() },
    },
    {
      kind: 'mmap2',
      ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER),
      pid: PID,
      tid: PID,
      addr: BASE,
      len: BigInt(Math.ceil(st.size / 4096) * 4096),
      pgoff: 0n,
      maj: 0,
      min: 0,
      ino: BigInt(st.ino),
      inoGeneration: 0n,
      prot: 5,
      flags: 2,
      filename: exe,
      sampleId: { pid: PID, tid: PID, time: tick() },
    },
  ];
  const ips = [BigInt(init.offset), BigInt(init.offset) + 4n, ...plt.map((p) => p.start + 4n)].map((o) => BASE + o);
  for (const ip of ips) records.push(userSample(ip, PID, tick()));
  const { theirs, mine } = await scriptBoth(join(dir, 'plt.data'), attr, records);
  assert.ok((theirs.match(/@plt\+/g) ?? []).length > 100, theirs.slice(0, 2000));
  assert.equal(firstDiff(mine, theirs), 'equal');
});
