/**
 * The native addon on its own, in chunk mode (no output fd: every pass is
 * handed to JavaScript): records come out whole, each pass ends with
 * FINISHED_ROUND, and the counters agree with what the chunks hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { encodeEventAttr } from '../src/perfdata/event-attr-codec.js';
import { RecordType } from '../src/abi/record-type.js';
import { ByteWriter } from '../src/io/byte-writer.js';
import { onlineCpus } from '../src/record/cpus.js';
import { trackingEvent } from '../src/record/events.js';
import { HOST_LE } from '../src/record/file-output.js';
import { loadRecorderAddon } from '../src/record/native.js';
import { canRecord } from './record-helpers.js';
import { tempDir } from './temp-dir.js';

function attrBytes(ev = trackingEvent({ switchEvents: true, ringBytes: 16 * 4096 })): Buffer {
  const w = new ByteWriter(HOST_LE);
  encodeEventAttr(w, ev.attr);
  return Buffer.from(w.finish());
}

test('chunk mode: whole records, FINISHED_ROUND per pass, counters match', async (t) => {
  if (!canRecord(t, { perf: false })) return;
  const Recorder = loadRecorderAddon();
  const chunks: Buffer[] = [];
  let done!: () => void;
  const final = new Promise<void>((r) => (done = r));
  const cpus = onlineCpus();
  const rec = new Recorder({ cpus, attrs: [attrBytes()], pages: 16, pollMs: 20 }, (c, isFinal) => {
    if (c) chunks.push(c);
    if (isFinal) done();
  });
  assert.equal(rec.ids().length, 1);
  assert.equal(rec.ids()[0]!.length, cpus.length);
  rec.start();
  for (let i = 0; i < 5; i++) spawnSync('true');
  await new Promise((r) => setTimeout(r, 100));
  rec.stop();
  await final;
  const s = rec.stats();
  rec.close();
  let records = 0;
  let rounds = 0;
  const types = new Map<number, number>();
  for (const c of chunks) {
    const dv = new DataView(c.buffer, c.byteOffset, c.byteLength);
    let off = 0;
    let last = -1;
    while (off < c.length) {
      assert.ok(off + 8 <= c.length, 'header inside the chunk');
      const type = dv.getUint32(off, HOST_LE);
      const size = dv.getUint16(off + 6, HOST_LE);
      assert.ok(size >= 8 && off + size <= c.length, `record at ${off} fits (size ${size})`);
      if (type === RecordType.FINISHED_ROUND) rounds++;
      else {
        records++;
        types.set(type, (types.get(type) ?? 0) + 1);
      }
      last = type;
      off += size;
    }
    assert.equal(last, RecordType.FINISHED_ROUND, 'each pass ends with FINISHED_ROUND');
  }
  assert.equal(records, s.records);
  assert.equal(rounds, s.passes);
  assert.equal(
    chunks.reduce((a, c) => a + c.length, 0),
    s.bytes,
  );
  assert.ok((types.get(RecordType.COMM) ?? 0) >= 5, `COMM of the 5 exec'd children: ${JSON.stringify([...types])}`);
  assert.equal(types.get(RecordType.COMM), s.types[RecordType.COMM]);
});

test('an event the kernel rejects names the CPU, the event and errno', (t) => {
  if (!canRecord(t, { perf: false })) return;
  const Recorder = loadRecorderAddon();
  const ev = trackingEvent({ switchEvents: false, ringBytes: 4096 });
  ev.attr.type = 0x7fff; // no such PMU
  assert.throws(
    () => new Recorder({ cpus: onlineCpus(), attrs: [attrBytes(ev)], pages: 1 }, () => undefined),
    /perf_event_open\(cpu \d+, event 0\): .*\(errno \d+\)/,
  );
  assert.throws(() => new Recorder({ cpus: [0], attrs: [attrBytes()], pages: 3 }, () => undefined), /power of two/);
});

test('the JavaScript event loop stays responsive while recording 10 kHz samples in-process', async (t) => {
  if (!canRecord(t, { perf: false })) return;
  const { record } = await import('../src/record/session.js');
  const { rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = tempDir('perfpoke-loop-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let ticks = 0;
  let worst = 0;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const ac = new AbortController();
  const r = await record({
    output: join(dir, 'loop.data'),
    events: ['cpu-clock'],
    freq: 10000,
    synthesizeTasks: false,
    signal: ac.signal,
    onStarted: () => {
      last = performance.now();
      timer = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
        if (++ticks === 50) ac.abort();
      }, 10);
    },
  });
  clearInterval(timer);
  assert.equal(ticks, 50);
  assert.ok(r.types.SAMPLE! > 100, `samples ${r.types.SAMPLE}`);
  t.diagnostic(`50 ticks of 10 ms; longest gap ${worst.toFixed(1)} ms while ${r.types.SAMPLE} samples were written`);
  // the reader thread, not the event loop, moves the data: no tick waits for a pass
  assert.ok(worst < 1000, `event loop stalled ${worst.toFixed(0)} ms`);
});
