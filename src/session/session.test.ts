import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RecordType } from '../abi/record-type.js';
import { PerfFile } from '../perfdata/index.js';
import { openSession } from './session.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'test', 'fixtures', 'recorded');

async function fileOrder(path: string): Promise<string[]> {
  const f = await PerfFile.open(path);
  const out: string[] = [];
  for await (const r of f.records()) out.push(`${r.fileOffset}:${r.type}`);
  await f.close();
  return out;
}

for (const name of ['switch.data', 'tp.data', 'zstd.data', 'pipe.data']) {
  test(`${name}: every record once; timed kernel records in time order, ties in file order`, async () => {
    const path = join(fixtures, name);
    const all = await fileOrder(path);
    for (const budget of [undefined, 4096]) {
      const s = await openSession(path, { maxQueueBytes: budget });
      const seen: string[] = [];
      let last = -1n;
      let lastOff = -1;
      for await (const r of s.events()) {
        seen.push(`${r.fileOffset}:${r.type}`);
        const t = r.type < RecordType.HEADER_ATTR ? r.timestamp() : undefined;
        if (t === undefined || t === 0n) continue;
        if (budget === undefined) {
          assert.ok(
            t > last || (t === last && (r.fileOffset >= lastOff || r.compressedIn !== 0)),
            `${name}: ${t} after ${last}`,
          );
        }
        last = t;
        lastOff = r.fileOffset;
      }
      assert.deepEqual([...seen].sort(), [...all].sort(), 'same records');
      if (budget !== undefined && s.queueStats && s.queueStats.queued > 200)
        assert.ok(s.queueStats.flushes.half > 0, 'a small budget forces HALF flushes');
      // a HALF flush may release records that a later one precedes (perf counts them too)
      if (budget === undefined) assert.equal(s.queueStats?.unordered ?? 0, 0);
      await s.close();
    }
  });
}

test('ordered: false keeps file order (perf script --show-round-events)', async () => {
  const path = join(fixtures, 'switch.data');
  const s = await openSession(path, { ordered: false });
  const seen: string[] = [];
  for await (const r of s.events()) seen.push(`${r.fileOffset}:${r.type}`);
  await s.close();
  assert.deepEqual(seen, await fileOrder(path));
});

test('event names come from the file (EVENT_DESC / pipe-mode records)', async () => {
  for (const [name, want] of [
    ['group.data', ['cpu-clock', 'task-clock']],
    ['tp.data', ['sched:sched_switch']],
    ['pipe.data', ['cpu-clock']],
  ] as const) {
    const s = await openSession(join(fixtures, name));
    for await (const _ of s.events()) void _;
    assert.deepEqual(s.eventNames().slice(0, want.length), want, name);
    await s.close();
  }
});
