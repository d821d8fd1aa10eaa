/**
 * Guest entry for phase C of guest-run.sh: ONE recording in which TWO events
 * set attr.text_poke — perfpoke's tracking dummy plus a second dummy with
 * only text_poke and ksymbol, as a tool adding its own event to perf's does.
 * Linux 6.1 then writes every poke once per event into that one file (each
 * event has its own ring here, as in perf), and every copy after the first
 * comes with the inflated header.size docs/real-kernel.md describes.
 *
 * It drives the recorder addon directly (src/record/session.ts opens one
 * text_poke event only) and writes a `perf record --kcore` directory:
 *
 *   node --import tsx scripts/qemu/two-consumer-record.ts OUT -- cmd args…
 */
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { emptyAttr, PERF_COUNT_SW_DUMMY, PerfType, withAttrFlag } from '../../src/abi/event-attr.js';
import { encodeEventAttr } from '../../src/perfdata/event-attr-codec.js';
import { ByteWriter } from '../../src/io/byte-writer.js';
import { onlineCpus } from '../../src/record/cpus.js';
import { RECORD_ATTR_SIZE, TRACKING_SAMPLE_TYPE, trackingEvent, type RecordEvent } from '../../src/record/events.js';
import { recordFeatures } from '../../src/record/features.js';
import { createRecordOutput, HOST_LE } from '../../src/record/file-output.js';
import type { PerfDataWriter } from '../../src/perfdata/writer.js';
import { copyKcoreDir } from '../../src/record/kcore-dir.js';
import { loadRecorderAddon } from '../../src/record/native.js';
import { synthesizeKernelMmaps } from '../../src/record/synthesize.js';

const [out, dashdash, ...command] = process.argv.slice(2);
if (!out || dashdash !== '--' || command.length === 0) {
  process.stderr.write('usage: two-consumer-record.ts OUT -- cmd args…\n');
  process.exit(2);
}

/** The second consumer: like perf's own text_poke dummy (record__config_text_poke). */
function secondTextPokeEvent(): RecordEvent {
  const a = emptyAttr();
  a.type = PerfType.SOFTWARE;
  a.size = RECORD_ATTR_SIZE;
  a.config = BigInt(PERF_COUNT_SW_DUMMY);
  a.samplePeriod = 1n;
  a.sampleType = TRACKING_SAMPLE_TYPE; // same sample_id layout as the first event
  for (const f of ['disabled', 'sample_id_all', 'ksymbol', 'text_poke', 'watermark'] as const)
    a.flags = withAttrFlag(a.flags, f);
  a.wakeupEvents = 64 * 1024;
  return { name: 'dummy:u', attr: a };
}

const pages = 128;
const events = [trackingEvent({ switchEvents: false, ringBytes: pages * 4096 }), secondTextPokeEvent()];
const attrBytes = (ev: RecordEvent): Buffer => {
  const w = new ByteWriter(HOST_LE, RECORD_ATTR_SIZE);
  encodeEventAttr(w, ev.attr, ev.attr.size);
  return Buffer.from(w.finish());
};
const cpus = onlineCpus();
const Recorder = loadRecorderAddon();
let finalSeen!: () => void;
const final = new Promise<void>((res) => (finalSeen = res));
let output: PerfDataWriter | undefined;
const rec = new Recorder(
  { cpus, attrs: events.map(attrBytes), pages, pollMs: 100, sampleTimeOffset: 32 },
  (chunk, isFinal) => {
    if (chunk && output) output.writeRecordsSync(chunk);
    if (isFinal) finalSeen();
  },
);
const ids = rec.ids();
const outEvents = events.map((event, k) => ({ event, ids: ids[k] ?? [] }));
const stage = `${out}.tmp-dir`;
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
if (process.env.NO_KCORE !== '1') copyKcoreDir(join(stage, 'kcore_dir')); // NO_KCORE=1: host smoke test
output = createRecordOutput(
  join(stage, 'data'),
  outEvents,
  recordFeatures({
    cmdline: ['two-consumer-record.ts', out, '--', ...command],
    nrCpusOnline: cpus.length,
    nrCpusAvail: Math.max(cpus.length, (cpus.at(-1) ?? 0) + 1),
  }),
);
output.writeRecordsSync(synthesizeKernelMmaps(HOST_LE, { id: outEvents[0]!.ids[0] ?? 0n }).bytes);
const target = output.appendTarget();
rec.start(target.fd, target.offset);
const code = await new Promise<number>((res) => {
  const c = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
  c.once('exit', (n) => res(n ?? 1));
  c.once('error', () => res(127));
});
rec.stop();
await final;
const s = rec.stats();
rec.close();
output.appendedUpTo(s.fileEnd);
output.finishSync();
rmSync(out, { recursive: true, force: true });
renameSync(stage, out);
process.stderr.write(`two-consumer-record: ${s.records} records, ${s.lost} lost, workload exit ${code}\n`);
process.exit(s.writeErrno !== 0 ? 3 : code);
