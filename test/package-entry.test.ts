import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot, runPerf } from './cli.js';
import { openPerfData, RecordType } from '../src/index.js';

test("the library entry: import { openPerfData } from 'perfpoke' reads a shipped file, as many records as perf counts", async (t) => {
  const path = join(repoRoot, 'test', 'fixtures', 'recorded', 'sw.data');
  const f = await openPerfData(path);
  let n = 0;
  let samples = 0;
  try {
    for await (const r of f.records()) {
      n++;
      if (r.type === RecordType.SAMPLE) samples++;
    }
  } finally {
    await f.close();
  }
  assert.ok(n > 0 && samples > 0);
  const perf = runPerf(['report', '--stats', '-i', path]);
  if (!perf) return t.skip('perf 6.1 not installed: counted, not compared');
  const m = /SAMPLE events:\s+(\d+)/.exec(perf.stdout);
  assert.ok(m, perf.stdout);
  assert.equal(samples, Number(m![1]));
});
