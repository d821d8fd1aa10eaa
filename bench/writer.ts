/**
 * Writer throughput: copy a recording with perfpoke (raw copy, and byte-swapped
 * re-encode) against `perf inject -i IN -o OUT` on the same file, same run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { copyPerfData } from '../src/perfdata/writer-copy.js';

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-bench-writer-'));
  const input = join(dir, 'in.data');
  const rec = spawnSync('/usr/bin/perf', ['record', '-q', '-a', '-F', '4000', '-o', input, '--', 'sleep', '2']);
  if (rec.status !== 0) {
    console.log('writer: skipped (perf record failed)');
    return;
  }
  const mb = statSync(input).size / 1e6;
  const time = async (fn: () => Promise<unknown> | unknown) => {
    const t = performance.now();
    await fn();
    return (performance.now() - t) / 1000;
  };
  await copyPerfData(input, join(dir, 'warm.data')); // JIT warm-up
  const perf = await time(() => spawnSync('/usr/bin/perf', ['inject', '-i', input, '-o', join(dir, 'perf.data')]));
  const raw = await time(() => copyPerfData(input, join(dir, 'raw.data')));
  const swap = await time(() => copyPerfData(input, join(dir, 'be.data'), { bigEndian: true }));
  console.log(
    `writer: ${mb.toFixed(1)} MB; perf inject ${perf.toFixed(2)} s; perfpoke copy ${raw.toFixed(2)} s ` +
      `(${(raw / perf).toFixed(2)}x perf); big-endian re-encode ${swap.toFixed(2)} s ` +
      `(${(swap / perf).toFixed(2)}x perf)`,
  );
}
