/**
 * The sample lines `script` prints straight from the record bytes
 * (src/format/script-fast.ts) and the reorder queue's u32-halves times
 * (src/session/ordered-events.ts), against perf 6.1's `perf script`, byte for
 * byte, on a `perf record -z --switch-events` recording made here of a
 * workload this test controls (dd): perf's default fields (sym, symoff, dso),
 * symbol-free fields, --ns, filters and switch events between the samples.
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
let recordFailure: string | null = null;

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
    'dd if=/dev/zero of=/dev/null bs=512 count=200000; dd if=/dev/zero bs=4k count=2000 | md5sum',
  ]);
  if (r?.status !== 0) recordFailure = `perf record -z: ${r?.stderr.trim()}`;
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

for (const args of CASES) {
  test(`script ${args.join(' ') || '(default fields)'} on a -z --switch-events recording matches perf`, async (t) => {
    if (runPerf(['--version']) === null) return cannotCompare(t, 'perf is not installed');
    assert.equal(recordFailure, null, recordFailure ?? '');
    const perf = runPerf(['script', '-i', file, ...args]);
    assert.ok(perf, 'perf script ran');
    assert.equal(perf.status, 0, perf.stderr);
    assert.ok(perf.stdout.split('\n').length > 1000, 'the recording holds samples');
    const o = await ours(file, args);
    assert.equal(o.err, undefined);
    assert.equal(o.out === perf.stdout ? 'equal' : firstDiff(o.out, perf.stdout), 'equal');
  });
}
