/**
 * BPF programs loaded before recording starts: perf record synthesizes a
 * KSYMBOL per sub-program and a BPF_EVENT (PROG_LOAD) from bpf(2)
 * (tools/perf/util/bpf-event.c); perfpoke's records must be the same ones,
 * in every mode (system wide, workload, pipe), so the code is named.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { repoRoot, runCli, runPerf } from './cli.js';
import { buildBpfLoad, cannotRecord, perfMissing, scratch } from './record-helpers.js';

function skipOrFail(t: TestContext, why: string | null): boolean {
  if (!why) return false;
  if (process.env.CI === 'true') assert.fail(`cannot compare with perf: ${why}`);
  t.skip(why);
  return true;
}

/** The synthesized (time 0) KSYMBOL / BPF_EVENT lines of `perf script --show-bpf-events`. */
function synthesizedBpf(args: string[], input?: Buffer): string[] {
  const r = runPerf(['script', '--show-bpf-events', ...args], input ? { input } : {})!;
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  return r.stdout
    .split('\n')
    .filter((l) => / 0\.000000: PERF_RECORD_(KSYMBOL|BPF_EVENT)/.test(l))
    .map((l) => l.replace(/^.*?PERF_RECORD_/, ''));
}

test('record: BPF programs already loaded get the KSYMBOL + BPF_EVENT records perf record synthesizes', async (t) => {
  if (skipOrFail(t, perfMissing() ?? cannotRecord())) return;
  const bin = buildBpfLoad();
  if (skipOrFail(t, bin ? null : 'gcc cannot build tools/bpf-load here')) return;
  const dir = scratch('bpf-synth');
  // hold two programs loaded while the four recordings run
  const loader = spawn(bin!, ['2', '60000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => loader.kill('SIGKILL'));
  const ids = await new Promise<string[]>((resolve, reject) => {
    let out = '';
    loader.stdout.on('data', (d) => {
      out += d;
      const got = [...out.matchAll(/^tag [0-9a-f]{16} id (\d+)$/gm)].map((m) => m[1]!);
      if (got.length === 2) resolve(got);
    });
    loader.on('exit', (code) => reject(new Error(`bpf-load exited ${code}`)));
  }).catch((e: Error) => e);
  if (ids instanceof Error) {
    if (skipOrFail(t, `bpf(2) refused here: ${ids.message}`)) return;
    throw ids;
  }
  const theirs = join(dir, 'perf.data');
  const p = runPerf(['record', '-a', '-e', 'dummy', '-o', theirs, '--', 'sleep', '0.1'])!;
  assert.equal(p.status, 0, p.stderr);
  const want = synthesizedBpf(['-i', theirs]);
  for (const id of ids)
    assert.ok(
      want.some((l) => l.endsWith(`id ${id}`)),
      `perf synthesized prog ${id}: ${want}`,
    );
  assert.ok(
    want.some((l) =>
      /KSYMBOL addr [0-9a-f]+ len \d+ type 1 flags 0x0 name bpf_prog_[0-9a-f]{16}_perfpoke_load/.test(l),
    ),
  );

  const sys = join(dir, 'sys.data');
  const a = runCli(['record', '-a', '-o', sys, '--', 'sleep', '0.1']);
  assert.equal(a.status, 0, a.stderr);
  assert.deepEqual(synthesizedBpf(['-i', sys]), want, 'system wide: as perf');
  const work = join(dir, 'work.data');
  const w = runCli(['record', '-o', work, '--', 'sleep', '0.1']);
  assert.equal(w.status, 0, w.stderr);
  assert.deepEqual(synthesizedBpf(['-i', work]), want, 'workload: as perf');
  const pipe = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), 'record', '-o', '-', '--', 'sleep', '0.1'],
    { cwd: repoRoot, maxBuffer: 1 << 28 },
  );
  assert.equal(pipe.status, 0, pipe.stderr.toString());
  assert.deepEqual(synthesizedBpf(['-i', '-'], pipe.stdout), want, 'pipe mode: as perf');
});
