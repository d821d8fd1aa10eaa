/**
 * The seed's experiment with perf 6.1 as referee: a simulated recording with
 * jump-label flips decodes with 0 errors when its TEXT_POKE records are
 * present, and with many when they are left out. perfpoke's decoder must
 * agree with perf on both files — the error list (cpu, time, ip, code) and
 * the instruction flow per CPU — and the flow must equal the ground truth.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { simulate, readTruth } from '../src/sim/simulate.js';
import { runCli, runPerf } from './cli.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const perfOk = existsSync('/usr/bin/perf') && runPerf(['--version']) !== null;
const dir = tempDir('perfpoke-exp-');
const withPokes = join(dir, 'with');
const without = join(dir, 'without');
const opts = { seed: 7, cpus: 2, flips: 6, size: 60_000 };
simulate({ out: withPokes, ...opts });
simulate({ out: without, ...opts, textPokes: false, truth: false });
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** "cpu ip" lines, grouped by CPU in decode order (a stable sort keeps each CPU's order). */
function byCpu(lines: string[]): string[] {
  return lines
    .map((l, i) => [l, i] as const)
    .sort((a, b) => Number(a[0].split(' ')[0]) - Number(b[0].split(' ')[0]) || a[1] - b[1])
    .map((x) => x[0]);
}
function perfInsns(d: string): string[] {
  const r = runPerf(['script', '-i', d, '--itrace=i0ns', '-F', 'cpu,ip']);
  assert.ok(r && r.status === 0, r?.stderr);
  return byCpu(
    r!.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const m = /^\[(\d+)\]\s+([0-9a-f]+)/.exec(l.trim());
        assert.ok(m, `unexpected perf line ${l}`);
        return `${Number(m![1])} ${m![2]}`;
      }),
  );
}
function ourInsns(d: string): string[] {
  const r = runCli(['decode', '-i', d, '--itrace=i0ns', '-F', 'cpu,ip']);
  assert.equal(r.status, 0, r.stderr);
  return byCpu(
    r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const m = /^\[(\d+)\]\s+([0-9a-f]+)/.exec(l.trim());
        assert.ok(m, `unexpected line ${l}`);
        return `${Number(m![1])} ${m![2]}`;
      }),
  );
}
function perfErrors(d: string): string[] {
  const r = runPerf(['script', '-i', d, '--itrace=e']);
  assert.ok(r && r.status === 0, r?.stderr);
  return r!.stdout
    .split('\n')
    .filter((l) => l.includes('instruction trace error'))
    .sort();
}

test('perf decodes the simulated recording with 0 errors, and so do we; the flow equals perf and the truth', {
  timeout: 120_000,
}, (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  assert.deepEqual(perfErrors(withPokes), []);
  const ours = runCli(['decode', '-i', withPokes, '--itrace=e']);
  assert.equal(ours.status, 0, ours.stderr);
  assert.equal(ours.stdout, '');
  assert.match(ours.stderr, /^0 instruction trace errors$/m);
  const p = perfInsns(withPokes);
  const o = ourInsns(withPokes);
  assert.ok(p.length > 10_000, `perf decoded only ${p.length} instructions`);
  assert.equal(o.length, p.length);
  assert.deepEqual(o, p);
  const truth = readTruth(withPokes);
  const tl = byCpu(
    truth.cpus.flatMap((c) => Array.from(c.off, (off) => `${c.cpu} ${(truth.base + BigInt(off)).toString(16)}`)),
  );
  assert.deepEqual(o, tl);
});

test('without TEXT_POKE records perf reports errors, and ours are the same list', { timeout: 120_000 }, (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const p = perfErrors(without);
  assert.ok(p.length >= 10, `expected many errors without pokes, perf found ${p.length}`);
  const ours = runCli(['decode', '-i', without, '--itrace=e']);
  assert.equal(ours.status, 0, ours.stderr);
  assert.deepEqual(ours.stdout.split('\n').filter(Boolean).sort(), p);
  assert.match(ours.stderr, new RegExp(`^${p.length} instruction trace errors$`, 'm'));
  assert.deepEqual(ourInsns(without), perfInsns(without));
});

test('branches (--itrace=b -F cpu,ip,addr) equal perf on the file without pokes', { timeout: 120_000 }, (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const r = runPerf(['script', '-i', without, '--itrace=b', '-F', 'cpu,ip,addr']);
  assert.ok(r && r.status === 0, r?.stderr);
  const ours = runCli(['decode', '-i', without, '--itrace=b', '-F', 'cpu,ip,addr']);
  assert.equal(ours.status, 0, ours.stderr);
  const norm = (s: string): string[] =>
    byCpu(
      s
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const m = /^\[(\d+)\]\s+([0-9a-f]+) => +([0-9a-f]+)/.exec(l.trim());
          assert.ok(m, `unexpected line ${l}`);
          return `${Number(m![1])} ${m![2]} ${m![3]}`;
        }),
    );
  assert.deepEqual(norm(ours.stdout), norm(r!.stdout));
});

test('the same experiment through `perfpoke inject --strip text_poke`', {
  timeout: 120_000,
}, (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const stripped = join(dir, 'stripped');
  const inj = runCli(['inject', '-i', withPokes, '-o', stripped, '--strip', 'text_poke']);
  assert.equal(inj.status, 0, inj.stderr);
  const p = perfErrors(stripped);
  assert.deepEqual(p, perfErrors(without));
  const ours = runCli(['decode', '-i', stripped, '--itrace=e']);
  assert.deepEqual(ours.stdout.split('\n').filter(Boolean).sort(), p);
});

test('timeless (no TSC bit in the config): perf applies every poke first and reports errors even with pokes; ' +
  'so do we', {
  timeout: 120_000,
}, (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const tl = join(dir, 'timeless');
  simulate({ out: tl, ...opts, timeless: true, truth: false });
  const p = perfErrors(tl);
  assert.ok(p.length > 0, 'perf reports errors when it cannot time the pokes');
  assert.ok(p.every((l) => l.includes(' time 0 ')));
  const ours = runCli(['decode', '-i', tl, '--itrace=e']);
  assert.equal(ours.status, 0, ours.stderr);
  assert.deepEqual(ours.stdout.split('\n').filter(Boolean).sort(), p);
  assert.deepEqual(ourInsns(tl), perfInsns(tl));
});
