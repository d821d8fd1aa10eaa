/**
 * BPF programs loaded before recording starts: perf record synthesizes a
 * KSYMBOL per sub-program and a BPF_EVENT (PROG_LOAD) from bpf(2)
 * (tools/perf/util/bpf-event.c); perfpoke's records must be the same ones,
 * in every mode (system wide, workload, pipe), so the code is named — for
 * programs without BTF (tools/bpf-load) and for one of two sub-programs named
 * by its BTF (tools/bpf-load/bpf-btf-load.c).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/** Build tools/bpf-load/bpf-btf-load.c; null when gcc cannot. */
function buildBtfLoad(): string | null {
  const out = join(scratch('bin'), 'bpf-btf-load');
  if (existsSync(out)) return out;
  const src = join(repoRoot, 'tools', 'bpf-load', 'bpf-btf-load.c');
  const r = spawnSync('gcc', ['-O2', '-Wall', '-o', out, src], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? null : out;
}

/** Wait for a loader's `n` "id N" lines (its programs are loaded then). */
function loaded(c: ChildProcess, n: number): Promise<string[] | Error> {
  return new Promise<string[]>((resolve, reject) => {
    let out = '';
    let err = '';
    c.stdout!.on('data', (d) => {
      out += d;
      const got = [...out.matchAll(/^(?:tag [0-9a-f]{16} )?id (\d+)$/gm)].map((m) => m[1]!);
      if (got.length === n) resolve(got);
    });
    c.stderr!.on('data', (d) => (err += d));
    c.on('exit', (code) => reject(new Error(`loader exited ${code}: ${err.trim()}`)));
  }).catch((e: Error) => e);
}

test('record: BPF programs already loaded get the KSYMBOL + BPF_EVENT records perf record synthesizes', async (t) => {
  if (skipOrFail(t, perfMissing() ?? cannotRecord())) return;
  const bin = buildBpfLoad();
  if (skipOrFail(t, bin ? null : 'gcc cannot build tools/bpf-load here')) return;
  const dir = scratch('bpf-synth');
  // hold three programs loaded while the recordings run: two without BTF, one of two sub-programs with BTF
  const btfBin = buildBtfLoad();
  if (skipOrFail(t, btfBin ? null : 'gcc cannot build tools/bpf-load/bpf-btf-load.c here')) return;
  const loaders = [bin!, btfBin!].map((b, k) =>
    spawn(b, k === 0 ? ['2', '60000'] : ['60000'], { stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  t.after(() => {
    for (const l of loaders) l.kill('SIGKILL');
  });
  const got = await Promise.all([loaded(loaders[0]!, 2), loaded(loaders[1]!, 1)]);
  for (const g of got) {
    if (!(g instanceof Error)) continue;
    if (skipOrFail(t, `bpf(2) refused here: ${g.message}`)) return;
    throw g;
  }
  const ids = got.flat() as string[];
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
  // the BTF names of both sub-programs, as perf's synthesize_bpf_prog_name gives them
  for (const f of ['perfpoke_main', 'perfpoke_sub'])
    assert.ok(
      want.some((l) => new RegExp(`name bpf_prog_[0-9a-f]{16}_${f}$`).test(l)),
      `${f}: ${want.join('\n')}`,
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
