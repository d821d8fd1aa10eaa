/**
 * perf's synthesized callchains on decode: `--itrace=g[N]` (a callchain from
 * the thread stack on each instruction and power sample), `G[N]` and `L[N]`
 * (callchains and last-branch entries on another event's samples, the
 * `cycles:k` ones of `sim --samples`), with `l`, `-F` lists that make perf
 * turn ip and sym on, callindent, `--ns`, `-G`, `s`, quick decoding: whole
 * outputs of `perfpoke decode` compared byte for byte with perf 6.1's `perf
 * script` on simulated recordings (text pokes and tasks; no pokes with errors
 * on 3 CPUs; user code traced without its binary; timeless; cycles samples;
 * power events). perf is the reference: the test fails under CI when it
 * cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseItrace } from '../src/format/itrace-options.js';
import { simulate } from '../src/sim/simulate.js';
import { needTool } from './require-tool.js';
import { RECORDINGS, simulateRecordings } from './decode-recordings.js';
import { compareDecode } from './decode-compare.js';
import { runCli } from './cli.js';
import { tempDir } from './temp-dir.js';

const rec = simulateRecordings('perfpoke-decode-chain-', ['pokes', 'noPokes', 'userCode', 'timeless', 'cycles']);
const power = join(tempDir('perfpoke-decode-chain-power-'), 'power');
simulate({ ...RECORDINGS.pokes, out: power, power: true });

/** Option sets for the recordings without other events; i100ns only where decode's periods equal perf's. */
const CASES: { args: string[]; i100ns?: boolean }[] = [
  { args: ['--itrace=i1000ig'] },
  { args: ['--itrace=i97ig4e'] },
  { args: ['--itrace=i1000ig16', '--ns'] },
  { args: ['--itrace=bi1000ige'] },
  { args: ['--itrace=crei300ig2', '-F', '+callindent,+flags'] },
  { args: ['--itrace=i500igl4e', '-F', '+brstack'] },
  // g turns ip and sym on for the instructions' output type (perf script's process_attr)
  { args: ['--itrace=i1000ig', '-F', 'tid,ip'] },
  { args: ['--itrace=i1000ig', '-F', 'tid,ip,dso'] },
  { args: ['--itrace=i1000ig', '-F', '-ip'] },
  { args: ['--itrace=i200iGl2', '-F', 'tid,ip,brstack'] },
  // intel_pt turns callchains on whatever -G says
  { args: ['--itrace=i1000ig', '-G'] },
  { args: ['--itrace=i100igs5e'] },
  { args: ['--itrace=i0nsqg3e'] },
  { args: ['--itrace=g'] },
  { args: ['--itrace=i100nsg'], i100ns: true },
  { args: ['--itrace=i100nsg2', '-F', '+insn'], i100ns: true },
];

/** The recording with cycles:k samples: G and L decorate them, g the synthesized ones. */
const CYCLES_CASES: string[][] = [
  ['--itrace=G'],
  ['--itrace=G3'],
  ['--itrace=i1000iG'],
  ['--itrace=i1000igG'],
  ['--itrace=i1000ig2G'],
  ['--itrace=i1000ig', '-F', 'time,ip'],
  ['--itrace=L', '-F', '+brstack'],
  ['--itrace=i1000iL4', '-F', '+brstacksym'],
  ['--itrace=iG2L3', '-F', '+brstack'],
];

const POWER_CASES: string[][] = [['--itrace=ppg'], ['--itrace=ppgi1000i'], ['--itrace=ppg', '-F', 'time,ip']];

/** Compare each option set; the counts of lines and of callchain lines equal to perf's. */
function compareAll(t: Parameters<typeof compareDecode>[0], input: string, sets: string[][], name: string) {
  let lines = 0;
  let chain = 0;
  for (const args of sets) {
    const b = compareDecode(t, input, args, name);
    if (b === null) return null;
    lines += b.length - 1;
    chain += b.filter((l) => l.startsWith('\t')).length;
  }
  return { lines, chain };
}

for (const name of ['pokes', 'noPokes', 'userCode', 'timeless'] as const) {
  test(`decode --itrace=…g prints perf's callchains: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    const sets = CASES.filter((c) => !c.i100ns || name === 'pokes' || name === 'noPokes').map((c) => c.args);
    const r = compareAll(t, rec[name], sets, name);
    if (r === null) return;
    t.diagnostic(`${sets.length} option sets, ${r.lines} lines (${r.chain} callchain lines) equal perf's`);
    assert.ok(r.chain > 500, `too few callchain lines to compare (${r.chain})`);
  });
}

test("decode --itrace=G/L prints perf's callchains and branch entries on cycles samples", { timeout: 600_000 }, (t) => {
  if (!needTool(t, 'perf')) return;
  const r = compareAll(t, rec.cycles, CYCLES_CASES, 'cycles');
  if (r === null) return;
  t.diagnostic(`${CYCLES_CASES.length} option sets, ${r.lines} lines (${r.chain} callchain lines) equal perf's`);
  assert.ok(r.chain > 100, `too few callchain lines to compare (${r.chain})`);
});

test("decode --itrace=p…g prints perf's callchains on power events", { timeout: 600_000 }, (t) => {
  if (!needTool(t, 'perf')) return;
  const r = compareAll(t, power, POWER_CASES, 'power');
  if (r === null) return;
  t.diagnostic(`${POWER_CASES.length} option sets, ${r.lines} lines (${r.chain} callchain lines) equal perf's`);
  assert.ok(r.chain > 20, `too few callchain lines to compare (${r.chain})`);
});

test('g, G, l, L take perf sizes: one callchain size and one branch size, 1 to 1024', () => {
  const s = parseItrace('ig');
  assert.equal(s.callchain, 16);
  assert.equal(s.addCallchain, 0);
  // the last letter sets perf's callchain_sz for both (its default without a number)
  assert.deepEqual([parseItrace('ig4G').callchain, parseItrace('ig4G').addCallchain], [16, 16]);
  assert.deepEqual([parseItrace('ig4G8').callchain, parseItrace('ig4G8').addCallchain], [8, 8]);
  assert.deepEqual([parseItrace('L').addLastBranch, parseItrace('il2L').lastBranch], [64, 64]);
  assert.equal(parseItrace('ig1024').callchain, 1024);
  assert.throws(() => parseItrace('ig0'), /'g' takes a size of 1 to 1024/);
  assert.throws(() => parseItrace('G1025'), /'G' takes a size of 1 to 1024/);
  const r = runCli(['decode', '-i', rec.pokes, '--itrace=ig2000']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^perfpoke: --itrace=ig2000: 'g' takes a size of 1 to 1024\n$/);
});
