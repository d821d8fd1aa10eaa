/**
 * The sample lines `script` prints straight from the record bytes
 * (src/format/script-fast.ts) and the reorder queue's u32-halves times
 * (src/session/ordered-events.ts), against perf 6.1's `perf script`, byte for
 * byte, on a `perf record -z --switch-events` recording made here of a
 * workload this test controls (dd): perf's default fields (sym, symoff, dso),
 * symbol-free fields, --ns, filters and switch events between the samples;
 * and on a `perf record -g -d` recording of it (callchain lines, script-fast-chain.ts; DATA_SRC after them),
 * with --max-stack, -G and MMAP / FORK records between the samples.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runPerf } from './cli.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptInProcess as ours } from './script-compare.js';

const dir = tempDir('perfpoke-script-fast-');
const file = join(dir, 'z.data');
const chainFile = join(dir, 'g.data');
let recordFailure: string | null = null;
const WORKLOAD = 'dd if=/dev/zero of=/dev/null bs=512 count=200000; dd if=/dev/zero bs=4k count=2000 | md5sum';

before(() => {
  if (runPerf(['--version']) === null) return;
  const r = runPerf([
    'record',
    '-q',
    '-z',
    '--switch-events',
    '-e',
    'cpu-clock',
    '-c',
    '20000',
    '-o',
    file,
    '--',
    'sh',
    '-c',
    WORKLOAD,
  ]);
  if (r?.status !== 0) recordFailure = `perf record -z: ${r?.stderr.trim()}`;
  const g = runPerf([
    'record',
    '-q',
    '-g',
    '-e',
    'cpu-clock',
    '-c',
    '20000',
    '-o',
    chainFile,
    '--',
    'sh',
    '-c',
    WORKLOAD,
  ]);
  if (g?.status !== 0) recordFailure ??= `perf record -g: ${g?.stderr.trim()}`;
});

const CASES: string[][] = [
  [],
  ['-F', 'comm,tid,pid,time,period,event,ip'],
  ['-F', 'comm,tid,time,ip,sym,symoff,dso', '--ns'],
  ['-F', 'pid,event,ip,dso'],
  ['-F', 'tid,period,sym'],
  ['--show-switch-events'],
  ['--comms', 'dd'],
];

const CHAIN_CASES: string[][] = [
  [],
  ['-F', 'comm,tid,pid,time,period,event,ip'],
  ['-F', 'comm,tid,time,ip,sym,symoff,dso', '--max-stack', '3'],
  ['-F', 'comm,pid,ip,dso', '--show-mmap-events', '--show-task-events'],
  ['-G'],
];

const cases = [
  ...CASES.map((args) => ({ args, input: file, what: '-z --switch-events' })),
  ...CHAIN_CASES.map((args) => ({ args, input: chainFile, what: '-g (callchains)' })),
];

for (const { args, input, what } of cases) {
  test(`script ${args.join(' ') || '(default fields)'} on a ${what} recording matches perf`, async (t) => {
    if (runPerf(['--version']) === null) return cannotCompare(t, 'perf is not installed');
    assert.equal(recordFailure, null, recordFailure ?? '');
    const perf = runPerf(['script', '-i', input, ...args]);
    assert.ok(perf, 'perf script ran');
    assert.equal(perf.status, 0, perf.stderr);
    assert.ok(perf.stdout.split('\n').length > 1000, 'the recording holds samples');
    const o = await ours(input, args);
    assert.equal(o.err, undefined);
    assert.equal(o.out === perf.stdout ? 'equal' : firstDiff(o.out, perf.stdout), 'equal');
  });
}
