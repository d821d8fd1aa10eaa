/**
 * perf's quick decoding, `--itrace=q` (hop: TNT ignored, no code walked, an
 * instruction sample of period 1 at each TIP target, FUP and PSB+ FUP, the
 * asynchronous branch of a FUP and its TIP, trace begins resampled) and `qq`
 * (leap from PSB+ to PSB+): whole outputs of `perfpoke decode` compared byte
 * for byte with perf 6.1's `perf script` on simulated recordings (text pokes;
 * no pokes with mid-burst PSBs on 3 CPUs; user code traced without its binary;
 * timeless). Not compared: a kcore cut short (quick decoding samples
 * addresses outside the image, which perf names `[unknown]` and decode by kallsyms).
 * perf is the reference: the test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseItrace } from '../src/format/itrace-options.js';
import { needTool } from './require-tool.js';
import { simulateRecordings } from './decode-recordings.js';
import { compareDecode } from './decode-compare.js';

const rec = simulateRecordings('perfpoke-decode-quick-', ['pokes', 'noPokes', 'userCode', 'timeless']);

const CASES: string[][] = [
  ['--itrace=qi0ns'],
  ['--itrace=qb'],
  ['--itrace=qibe', '-F', '+flags'],
  // the instruction period does not apply: every sample has period 1
  ['--itrace=qi100ns'],
  ['--itrace=qcre', '-F', '+callindent,+flags'],
  ['--itrace=qi0nsl4', '-F', '+brstack'],
  ['--itrace=qbi0ns', '-F', '+insn,+insnlen,+flags'],
  ['--itrace=qs5ib', '-F', 'comm,tid,cpu,ip,sym,addr'],
  ['--itrace=qqi'],
  ['--itrace=qqibel2', '-F', '+brstacksym'],
];

for (const [name, input] of Object.entries(rec)) {
  test(`decode --itrace=q/qq prints perf's quick decoding: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    const per: string[] = [];
    for (const args of CASES) {
      const b = compareDecode(t, input, args, name);
      if (b === null) return;
      lines += b.length - 1;
      per.push(`${args[0]?.slice(9)} ${b.length - 1}`);
    }
    t.diagnostic(`${CASES.length} option sets, ${lines} lines equal perf's (${per.join(', ')})`);
    assert.ok(lines > 500, `too few lines to compare (${lines})`);
  });
}

test('q counts: q hops, qq leaps', () => {
  assert.equal(parseItrace('qi').quick, 1);
  assert.equal(parseItrace('qqi').quick, 2);
  assert.equal(parseItrace('i').quick, 0);
});
