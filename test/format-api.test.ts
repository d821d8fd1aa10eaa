/**
 * The format layer as a library user meets it (the package entry's
 * formatScript): perf's text for one record, compared with perf 6.1's own
 * `perf script` on a recorded file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { formatScript, openSession, RecordType, type PerfRecord } from '../src/index.js';
import { runPerf, repoRoot } from './cli.js';

const sw = join(repoRoot, 'test', 'fixtures', 'recorded', 'sw.data');

test('formatScript prints each sample as perf script does (-F tid,time,event,ip,period)', async (t) => {
  const perf = runPerf(['script', '-i', sw, '-F', 'tid,time,event,ip,period']);
  if (!perf) {
    if (process.env.CI === 'true') assert.fail('perf 6.1 is needed in CI');
    return t.skip('perf 6.1 not available at /usr/bin/perf');
  }
  assert.equal(perf.status, 0, perf.stderr);
  const s = await openSession(sw);
  const lines: string[] = [];
  try {
    const width = Math.max(...s.eventNames().map((n) => n.length));
    for await (const raw of s.events()) {
      if (raw.type !== RecordType.SAMPLE) continue;
      const sample = raw.decode() as Extract<PerfRecord, { kind: 'sample' }>;
      const fields = ['tid', 'time', 'event', 'ip', 'period'] as const;
      const samplePeriod = s.attrOf(raw)?.attr.samplePeriod;
      lines.push(
        formatScript(sample, { fields: [...fields], event: s.eventName(raw), eventWidth: width, samplePeriod }),
      );
    }
  } finally {
    await s.close();
  }
  assert.ok(lines.length > 10, 'the fixture has samples');
  assert.equal(lines.join(''), perf.stdout);
});

test('formatScript --json form: addresses as 0x strings, time beside time_ns, period a number', () => {
  const sample = {
    kind: 'sample',
    type: 9,
    misc: 1,
    size: 48,
    fileOffset: 4096,
    ip: 0xffffffff81000010n,
    time: 5123006792123n,
    period: 250000n,
    cpu: 1,
    pid: 7,
    tid: 8,
  } as const;
  const o = JSON.parse(formatScript({ ...sample }, { json: true, comm: 'sleep', event: 'cpu-clock' }));
  assert.deepEqual(o, {
    type: 'sample',
    offset: 4096,
    comm: 'sleep',
    tid: 8,
    cpu: 1,
    time: '5123.006792',
    time_ns: '5123006792123',
    period: 250000,
    event: 'cpu-clock',
    ip: '0xffffffff81000010',
  });
});
