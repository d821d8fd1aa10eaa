import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession, type SessionOptions } from './session.js';

// Records queued straight from the reader's window (window-route.ts), and records handed out as
// reused objects (reuseRecords), must come out exactly as those routed and made one RawRecord at a
// time: same records, same order, same bytes while their batch is consumed, same queue statistics.
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'test', 'fixtures');
const recorded = join(root, 'recorded');
const files = [
  ...readdirSync(recorded)
    .filter((n) => n.endsWith('.data') && !n.startsWith('pipe'))
    .map((n) => join(recorded, n)),
  join(recorded, 'synthetic', 'text-poke.data'),
  join(recorded, 'synthetic', 'text-poke-be.data'), // big-endian
  ...['perf-alone', 'perf-kcore', 'perfpoke-kcore', 'perfpoke-two'].map((d) => join(root, 'real-kernel', d, 'data')),
].filter((p) => existsSync(p));

async function delivered(path: string, opts: SessionOptions): Promise<{ lines: string[]; stats: string }> {
  const s = await openSession(path, opts);
  const lines: string[] = [];
  for await (const batch of s.batches()) {
    assert.equal(new Set(batch).size, batch.length, 'an object twice in one batch');
    for (const r of batch) {
      const h = createHash('sha1').update(r.bytes).digest('hex').slice(0, 12);
      lines.push(`${r.fileOffset}:${r.type}:${r.compressedIn}:${r.length}:${h}`);
    }
  }
  await s.close();
  return { lines, stats: JSON.stringify(s.queueStats) };
}

test('fixtures found', () => assert.ok(files.length >= 14, `${files.length} files`));

for (const path of files) {
  test(`${path.slice(root.length + 1)}: the window router and reused records deliver as route() does`, async () => {
    for (const maxQueueBytes of [undefined, 4096, 300]) {
      for (const perfTimes of [false, true]) {
        // a small window: records straddle its refills, and the reader puts those in the batch itself
        for (const [roundBeforeFlush, windowSize] of [
          [false, undefined],
          [true, 4096],
        ] as const) {
          const opts = { maxQueueBytes, perfTimes, roundBeforeFlush, windowSize };
          const want = await delivered(path, { ...opts, windowRoute: false });
          const what = JSON.stringify(opts);
          assert.ok(want.lines.length > 0, `${what}: no records`);
          for (const reuseRecords of [false, true]) {
            const got = await delivered(path, { ...opts, reuseRecords });
            assert.deepEqual(got.lines, want.lines, `${what}, reuseRecords ${reuseRecords}`);
            assert.equal(got.stats, want.stats, `${what}: queue statistics`);
          }
        }
      }
    }
  });
}
