/**
 * `perfpoke record -o -`: pipe mode on stdout, read by perf 6.1 with `-i -`
 * through a real pipe, the workload's stdout moved to stderr (as perf does),
 * and a reader that stalls: the native thread then waits for the pipe, and
 * every record it counted still arrives.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot, runPerf } from './cli.js';
import { cannotRecord, perfMissing, scratch } from './record-helpers.js';

function skipOrFail(t: TestContext): boolean {
  const why = perfMissing() ?? cannotRecord();
  if (!why) return false;
  if (process.env.CI === 'true') assert.fail(`cannot compare with perf: ${why}`);
  t.skip(why);
  return true;
}

const mainTs = join(repoRoot, 'src', 'cli', 'main.ts');
const perfpoke = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(mainTs)}`;

function sh(script: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('/bin/sh', ['-c', script], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const SPIN = 'i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done';

test('record -o - | perf script -i -: perf reads the stream, the workload prints on stderr', (t) => {
  if (skipOrFail(t)) return;
  const dir = scratch('pipe');
  const err = join(dir, 'perf.err');
  const r = sh(`${perfpoke} record -o - -e cpu-clock -- sh -c 'echo to-stdout; ${SPIN}' | perf script -i - 2>${err}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(err, 'utf8'), '', 'perf script -i - warned');
  assert.match(r.stderr, /^to-stdout$/m, "the workload's stdout went to stderr");
  assert.doesNotMatch(r.stdout, /to-stdout/);
  assert.match(r.stderr, /Captured and wrote [\d.]+ MB to stdout \(\d+ records, \d+ lost\)/);
  const samples = r.stdout.split('\n').filter((l) => /^\s*sh\s+\d+\s+\[\d+\]\s+[\d.]+:\s+\d+ cpu-clock:/.test(l));
  assert.ok(samples.length > 10, r.stdout.slice(0, 2000));
  assert.equal(existsNamedDash(), false, 'no file named -');
});

function existsNamedDash(): boolean {
  return spawnSync('test', ['-e', join(repoRoot, '-')]).status === 0;
}

test('record -o - into a reader that stalls 2 s: every record counted arrives, perf report -i - agrees', (t) => {
  if (skipOrFail(t)) return;
  const dir = scratch('pipe-slow');
  const data = join(dir, 'slow.data');
  const r = sh(`${perfpoke} record -o - -e cpu-clock -F 10000 -- sh -c '${SPIN}; ${SPIN}' | (sleep 2; cat) > ${data}`);
  assert.equal(r.status, 0, r.stderr);
  const m = /Captured and wrote [\d.]+ MB to stdout \((\d+) records, (\d+) lost\)/.exec(r.stderr);
  assert.ok(m, r.stderr);
  const bytes = readFileSync(data);
  assert.ok(bytes.length > 65536, `more than a pipe buffer went through (${bytes.length} bytes)`);
  assert.equal(bytes.subarray(0, 8).toString('latin1'), 'PERFILE2');
  const d = runPerf(['script', '-D', '-i', '-'], { input: bytes })!;
  assert.equal(d.status, 0, d.stderr);
  assert.equal(d.stderr, '');
  // kernel records carry a time; perfpoke's synthesized ones and the pipe's ATTR/FEATURE records do not
  const kernel = [...d.stdout.matchAll(/^-?\d+ [1-9]\d* 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_/gm)].length;
  assert.equal(kernel, Number(m[1]), 'every kernel record perfpoke counted is in the stream');
  const st = runPerf(['report', '--stats', '-i', '-'], { input: bytes })!;
  assert.equal(st.status, 0, st.stderr);
  const samples = Number(/^\s*SAMPLE events:\s+(\d+)/m.exec(st.stdout)?.[1]);
  const scriptSamples = runPerf(['script', '-i', '-'], { input: bytes })!
    .stdout.split('\n')
    .filter((l) => l.includes('cpu-clock:')).length;
  assert.equal(scriptSamples, samples);
  assert.ok(samples > 100, `samples ${samples}`);
});
