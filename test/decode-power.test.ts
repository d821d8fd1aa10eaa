/**
 * perf's itrace `p` (power events: psb, cbr, pwre, exstop, pwrx samples),
 * `--call-trace` and `--call-ret-trace` on decode: whole outputs of `perfpoke
 * decode` compared byte for byte with perf 6.1's `perf script` on simulated
 * recordings with power-event packets (`sim --power`: CBR in every PSB+ and at
 * frequency changes, PWRE/EXSTOP/PWRX with the pwr_evt config bit), with text
 * pokes, without them and with errors, without tasks, timeless, with another
 * event's samples, and on a recording without any power packet (perf still
 * prints psb samples and the queue's first cbr). perf is the reference: the
 * test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { compareDecode } from './decode-compare.js';
import { RECORDINGS } from './decode-recordings.js';
import { runCli } from './cli.js';

const dir = tempDir('perfpoke-decode-power-');
const base = { cpus: 2, flips: 4, size: 4000, truth: false } as const;
const rec = {
  pokes: join(dir, 'pokes'),
  noPokes: join(dir, 'no-pokes'),
  noTasks: join(dir, 'no-tasks'),
  timeless: join(dir, 'timeless'),
  cycles: join(dir, 'cycles'),
  noPower: join(dir, 'no-power'),
};
simulate({ ...RECORDINGS.pokes, out: rec.pokes, power: true });
simulate({ ...RECORDINGS.noPokes, out: rec.noPokes, power: true });
simulate({ ...base, out: rec.noTasks, seed: 5, power: true });
simulate({ ...base, out: rec.timeless, seed: 4, timeless: true, power: true });
simulate({ ...RECORDINGS.cycles, out: rec.cycles, power: true });
simulate({ ...RECORDINGS.pokes, out: rec.noPower });

/** Option sets; each must give perf's output on every recording. */
const CASES: string[][] = [
  ['--itrace=p'],
  ['--itrace=cep'],
  ['--call-trace'],
  ['--call-ret-trace'],
  ['--itrace=pi100ns'],
  ['--itrace=pe', '-F', '+flags,+addr'],
  ['--itrace=p', '--ns', '-F', 'ip,synth'],
  ['--itrace=p', '-F', 'comm,tid,cpu,time,flags,ip,sym,addr'],
  ['--itrace=pbe', '-F', '+flags,+callindent'],
];

for (const [name, input] of Object.entries(rec)) {
  test(`decode prints perf's power events and call traces: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    const kinds = new Map<string, number>();
    // timeless: a time period (i100ns) has no time to count in (it still differs from perf there), and perf
    // refuses a -F list with `time` (its synthesized events have no TIME)
    const cases = CASES.filter(
      (c) => !(name === 'timeless' && (c[0] === '--itrace=pi100ns' || c[2]?.includes('time'))),
    );
    for (const args of cases) {
      const b = compareDecode(t, input, args, name);
      if (b === null) return;
      lines += b.length - 1;
      if (args[0] !== '--itrace=p' || args.length > 1) continue;
      for (const l of b) {
        const m = /\s(psb|cbr|pwre|exstop|pwrx): /.exec(l);
        if (m?.[1]) kinds.set(m[1], (kinds.get(m[1]) ?? 0) + 1);
      }
    }
    t.diagnostic(`${cases.length} option sets, ${lines} lines equal perf's; --itrace=p: ${[...kinds].join(', ')}`);
    // the recordings must show what the comparison is about
    const want = name === 'noPower' ? ['psb', 'cbr'] : ['psb', 'cbr', 'pwre', 'exstop', 'pwrx'];
    for (const k of want) assert.ok(kinds.has(k), `${name}: no ${k} sample: ${[...kinds]}`);
    if (name !== 'noPower') assert.ok((kinds.get('cbr') ?? 0) > 2, `${name}: no CBR change: ${[...kinds]}`);
  });
}

test('decode refuses power-event options it does not follow, naming them', () => {
  for (const [args, what] of [
    [['--itrace=ps2'], "'s' with 'p'"],
    [['--call-ret-trace', '--itrace=ce'], '--call-ret-trace'],
    [['--insn-trace', '--call-trace'], '--insn-trace'],
  ] as const) {
    const r = runCli(['decode', '-i', rec.pokes, ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(what), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
