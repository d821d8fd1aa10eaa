/**
 * `perfpoke decode` prints what `perf script --itrace=…` prints, byte for
 * byte: perf's default fields (comm, tid, cpu, time, period, event, `ip
 * sym+off (dso)`, branches' `=> addr sym+off (dso)`), all CPUs merged in
 * perf's time order, error lines among them, for each --itrace letter and
 * period decode supports and for -F in perf's vocabulary; on simulated
 * recordings with their TEXT_POKEs (no errors) and without (errors, resyncs).
 * perf 6.1 is the reference: the test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { runCli } from './cli.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { compareDecode } from './decode-compare.js';
import { cutLoadSegments } from './kcore-cut.js';

const dir = tempDir('perfpoke-decode-perf-');
const rec = {
  pokes: join(dir, 'pokes'),
  noPokes: join(dir, 'no-pokes'),
  threeCpus: join(dir, 'three-cpus'),
  codeMissing: join(dir, 'code-missing'),
};
simulate({ out: rec.pokes, seed: 2, cpus: 2, flips: 4, size: 3000, truth: false });
simulate({ out: rec.noPokes, seed: 2, cpus: 2, flips: 4, size: 3000, truth: false, textPokes: false });
simulate({
  out: rec.threeCpus,
  seed: 3,
  cpus: 3,
  flips: 4,
  size: 6000,
  truth: false,
  textPokes: false,
  midBurstPsb: true,
  psbPeriod: 300,
});

// Code missing from the image (error 5, "Failed to get instruction"): kcore's segments cut short.
cpSync(rec.pokes, rec.codeMissing, { recursive: true });
cutLoadSegments(join(rec.codeMissing, 'kcore_dir', 'kcore'), 0x600);

/** The option sets compared: perf's spelling, which decode takes as is. */
const CASES: string[][] = [
  ['--itrace=i0ns'],
  ['--itrace=b'],
  ['--itrace=e'],
  ['--itrace=ibe'],
  ['--itrace=c'],
  ['--itrace=r'],
  ['--itrace=cre'],
  ['--itrace=i'],
  ['--itrace=i100ns'],
  ['--itrace=i10us'],
  ['--itrace=i1000i'],
  ['--itrace=i17ie'],
  ['--itrace=xwo'],
  ['--itrace=s5b'],
  ['--insn-trace'],
  ['--itrace=b', '-F', '+insn,+insnlen'],
  ['--itrace=i0ns', '-F', 'cpu,ip'],
  ['--itrace=b', '-F', 'cpu,ip,addr'],
  ['--itrace=ibe', '-F', 'comm,pid,tid,cpu,time,ip,sym,dso,addr', '--ns'],
];

function compare(t: { skip(m?: string): void }, input: string, args: string[]): number {
  const perfLines = compareDecode(t, input, args);
  return perfLines === null ? -1 : perfLines.length - 1;
}

for (const [name, input] of Object.entries(rec)) {
  test(`decode equals perf script --itrace on the ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    const few = name === 'threeCpus' || name === 'codeMissing';
    const cases = few ? CASES.filter((c) => /^--itrace=(i0ns|ibe|i100ns|i17ie)$/.test(c[0]!)) : CASES;
    let lines = 0;
    for (const args of cases) {
      const n = compare(t, input, args);
      if (n < 0) return;
      lines += n;
    }
    t.diagnostic(`${cases.length} option sets, ${lines} lines equal perf's`);
    assert.ok(lines > 0);
  });
}

test('decode refuses what it does not do, naming it', () => {
  for (const [args, what] of [
    [['--itrace=iy'], "'y'"],
    [['--itrace=ig0'], "'g'"],
    [['--itrace=ps3'], "'s' with 'p'"],
    [['--itrace=ik'], "'k'"],
    [['--itrace=b', '-F', 'brstackoff'], "'brstackoff'"],
    [['--itrace=il0'], "'l'"],
    [['--call-trace', '--itrace=be'], '--call-trace'],
    [['--call-trace', '--call-ret-trace'], '--call-ret-trace'],
  ] as const) {
    const r = runCli(['decode', '-i', rec.pokes, ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(what), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
  }
});
