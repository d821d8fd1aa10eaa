/**
 * perf's timing from MTC, TMA and CYC packets on decode: whole outputs of `perfpoke decode` compared byte for
 * byte with perf 6.1's `perf script` on simulated recordings whose traces carry them (`sim --mtc-period`,
 * `--cyc`, `--tsc-ctc`): MTC only and MTC with CYC, with several MTC periods (one above 8, where perf fixes
 * the TMA's missing MTC bits up) and TSC:CTC ratios (whole and fractional), with text pokes and without them
 * (errors), with PSB+ inside bursts, and with power events (CYC timed by the CBR until MTCs calibrate it).
 * Time-based instruction periods (i100ns, i10us) sample where perf's clock says. Recordings of 2 and 3 CPUs
 * check the merged order: perf switches queues at any decoder state whose time reaches the next queue's
 * (direct branches, instruction samples, resync states after errors, PSB+), not only at new timestamps.
 * perf is the reference: the test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { type SimOptions, simulate } from '../src/sim/simulate.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { compareDecode } from './decode-compare.js';
import { runCli, runPerf } from './cli.js';

const dir = tempDir('perfpoke-decode-timing-');
const base = { cpus: 1, flips: 4, size: 20_000, truth: false } as const;
/** Several CPUs: the output is merged in perf's queue order, which switches queues at the decoder states. */
const multi = { ...base, size: 60_000 } as const;
const RECORDINGS = {
  /** MTC every 8 CTC ticks, TSC:CTC 2/1, text pokes, two tasks */
  mtc: { ...base, seed: 4, mtcPeriod: 3, tasks: 2 },
  /** MTC every 32 CTC ticks, TSC:CTC 5/2, CYC (threshold 2 cycles) calibrated between MTCs, text pokes */
  mtcCyc: { ...base, seed: 5, mtcPeriod: 5, tscCtc: [5, 2], cycThresh: 2, tasks: 2 },
  /** MTC every 1024 CTC ticks (mtc_shift > 8), TSC:CTC 3/1, no TEXT_POKE records (errors), PSB+ inside bursts */
  noPokes: { ...base, seed: 3, mtcPeriod: 10, tscCtc: [3, 1], textPokes: false, midBurstPsb: true, psbPeriod: 300 },
  /** CYC every cycle with CBR changes (power events), MTC every 2 CTC ticks */
  power: { ...base, seed: 6, mtcPeriod: 1, tscCtc: [83, 4], cycThresh: 0, power: true },
  /** 2 CPUs, three tasks, MTC every 8 CTC ticks, text pokes (queues yield at direct branches, samples, TIP.PGD) */
  cpus2: { ...multi, cpus: 2, seed: 7, mtcPeriod: 3, tasks: 3 },
  /** 3 CPUs, CYC, TSC:CTC 5/2, text pokes */
  cpus3Cyc: { ...multi, cpus: 3, seed: 8, mtcPeriod: 5, tscCtc: [5, 2], cycThresh: 2, tasks: 3 },
  /** 3 CPUs, CYC, no TEXT_POKE records (errors: queues yield at the resync), PSB+ with FUP inside bursts */
  cpus3NoPokes: {
    ...multi,
    cpus: 3,
    seed: 26,
    mtcPeriod: 5,
    tscCtc: [5, 2],
    cycThresh: 2,
    tasks: 3,
    textPokes: false,
    midBurstPsb: true,
    psbPeriod: 300,
  },
  /** 2 CPUs, PSB+ with FUP inside bursts, other events' samples, MTC every 4 CTC ticks */
  cpus2Psb: { ...multi, cpus: 2, seed: 13, mtcPeriod: 2, midBurstPsb: true, psbPeriod: 300, samples: 20, tasks: 2 },
} satisfies Record<string, Omit<SimOptions, 'out'>>;

const rec: Record<string, string> = {};
for (const [name, o] of Object.entries(RECORDINGS)) {
  rec[name] = join(dir, name);
  simulate({ ...o, out: rec[name] });
}

/** Option sets; each must give perf's output on every recording. */
const CASES: string[][] = [
  ['--itrace=b', '--ns'],
  ['--itrace=i100ns', '--ns'],
  ['--itrace=i10us'],
  ['--itrace=ce', '--ns'],
  ['--itrace=c'],
  ['--itrace=e'],
  ['--itrace=pe', '--ns'],
  ['--itrace=i1000ns', '--ns', '-F', '+flags'],
];

for (const [name, input] of Object.entries(rec)) {
  test(`decode times samples as perf does from MTC/TMA/CYC: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    for (const args of CASES) {
      const b = compareDecode(t, input, args, name);
      if (b === null) return;
      lines += b.length - 1;
    }
    t.diagnostic(`${CASES.length} option sets, ${lines} lines equal perf's`);
    // the recording must be about timing packets: perf's branch times are not only the bursts' TSCs
    const dump = runPerf(['script', '-i', input, '-D']);
    assert.ok(dump && dump.status === 0, 'perf script -D did not run');
    const tscs = (dump.stdout.match(/ TSC 0x/g) ?? []).length;
    for (const p of ['MTC 0x', 'TMA CTC']) assert.ok(dump.stdout.includes(p), `${name}: no ${p} packet`);
    if ('cycThresh' in RECORDINGS[name as keyof typeof RECORDINGS])
      assert.ok(/ CYC 0x/.test(dump.stdout), `${name}: no CYC packet`);
    const b = runPerf(['script', '-i', input, '--itrace=b', '--ns', '-F', 'time']);
    const times = new Set(b?.stdout.split('\n').filter((l) => l.trim()));
    assert.ok(2 * times.size > 3 * tscs, `${name}: ${times.size} distinct branch times for ${tscs} TSC packets`);
  });
}

test('sim refuses timing options out of range, naming them', () => {
  for (const [args, what] of [
    [['--mtc-period', '16'], '--mtc-period'],
    [['--cyc', '-1'], '--cyc'],
    [['--tsc-ctc', '2'], '--tsc-ctc'],
    [['--tsc-ctc', '1024/2'], '--tsc-ctc'],
  ] as const) {
    const r = runCli(['sim', '-o', join(dir, 'refused'), ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(what), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
