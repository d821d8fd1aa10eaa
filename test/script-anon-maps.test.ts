/**
 * perf names anonymous memory after the JIT symbol file it would read
 * (/tmp/perf-PID.map) only when the map is executable (map__new: MMAP2's
 * prot, and PROT_EXEC for an MMAP without MISC_MMAP_DATA); other anonymous
 * maps print as `//anon`. Seen live: a DWARF fallback step under `sh -c`
 * landing in the heap. A synthetic file with each kind of anonymous map and a
 * callchain through all of them, against perf 6.1's `perf script`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptBoth, userSample } from './script-compare.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { emptyAttr, PerfType, PERF_COUNT_SW_CPU_CLOCK, withAttrFlag } from '../src/abi/event-attr.js';
import { SampleType, PERF_CONTEXT_USER } from '../src/abi/sample-format.js';
import { RecordType, PERF_RECORD_MISC_USER, PERF_RECORD_MISC_MMAP_DATA } from '../src/abi/record-type.js';

const dir = tempDir('perfpoke-anon-maps-');
const PID = 4242;
const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });

test('anonymous maps print as //anon unless executable, as perf names them', async (t) => {
  if (!needTool(t, 'perf')) return;
  const attr = emptyAttr();
  attr.type = PerfType.SOFTWARE;
  attr.config = BigInt(PERF_COUNT_SW_CPU_CLOCK);
  attr.samplePeriod = 1000n;
  attr.sampleType = SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CALLCHAIN | SampleType.PERIOD;
  for (const f of ['sample_id_all', 'mmap', 'comm', 'task', 'mmap2', 'mmap_data'] as const)
    attr.flags = withAttrFlag(attr.flags, f);
  let time = 1_000_000n;
  const tick = (): bigint => {
    time += 1000n;
    return time;
  };
  const sampleId = () => ({ pid: PID, tid: PID, time: tick() });
  const anon = { maj: 0, min: 0, ino: 0n, inoGeneration: 0n, flags: 0x22, filename: '//anon' };
  // [start, prot] of MMAP2 maps, then MMAP maps with and without MISC_MMAP_DATA
  const maps: PerfRecord[] = [
    { kind: 'comm', ...head(RecordType.COMM), pid: PID, tid: PID, comm: 'anonmaps', sampleId: sampleId() },
    ...(
      [
        [0x7f0000000000n, 3],
        [0x7f0000100000n, 7],
        [0x7f0000200000n, 5],
        [0x7f0000300000n, 1],
      ] as const
    ).map(
      ([addr, prot]): PerfRecord => ({
        kind: 'mmap2',
        ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER),
        pid: PID,
        tid: PID,
        addr,
        len: 0x10000n,
        pgoff: 0n,
        prot,
        ...anon,
        sampleId: sampleId(),
      }),
    ),
    ...(
      [
        [0x7f0000400000n, PERF_RECORD_MISC_MMAP_DATA],
        [0x7f0000500000n, 0],
      ] as const
    ).map(
      ([addr, misc]): PerfRecord => ({
        kind: 'mmap',
        ...head(RecordType.MMAP, PERF_RECORD_MISC_USER | misc),
        pid: PID,
        tid: PID,
        addr,
        len: 0x10000n,
        pgoff: 0n,
        filename: '//anon',
        sampleId: sampleId(),
      }),
    ),
  ];
  const ips = [0x7f0000000010n, 0x7f0000100020n, 0x7f0000200030n, 0x7f0000300040n, 0x7f0000400050n, 0x7f0000500060n];
  const samples = ips.map((ip, k) =>
    userSample(ip, PID, tick(), [PERF_CONTEXT_USER, ...ips.slice(k), ...ips.slice(0, k)]),
  );
  const { theirs, mine } = await scriptBoth(join(dir, 'anon.data'), attr, [...maps, ...samples]);
  assert.ok(theirs.includes('(//anon)') && theirs.includes(`(/tmp/perf-${PID}.map)`), theirs);
  assert.equal(firstDiff(mine, theirs), 'equal');
});
