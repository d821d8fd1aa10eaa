/**
 * perf's `--itrace=l[N]` (last-branch entries on each synthesized instruction
 * sample) printed with `-F +brstack` / `+brstacksym`: whole outputs of
 * `perfpoke decode` compared byte for byte with perf 6.1's `perf script` on
 * simulated recordings (several tasks with text pokes; no pokes with mid-burst
 * PSBs and errors on 3 CPUs; user code traced without its binary; tasks
 * moving between CPUs, and the idle task, whose branches perf keeps no stack
 * of). perf is the reference: the test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseItrace } from '../src/format/itrace-options.js';
import { needTool } from './require-tool.js';
import { simulateRecordings } from './decode-recordings.js';
import { compareDecode } from './decode-compare.js';
import { runCli } from './cli.js';

const rec = simulateRecordings('perfpoke-decode-lbr-', ['pokes', 'noPokes', 'userCode']);

/** Option sets; perf's default period (i100ns) still differs on the user-code file (docs/intel-pt-flow.md). */
const CASES: { args: string[]; i100ns?: boolean }[] = [
  { args: ['--itrace=i0nsl4e', '-F', '+brstack'] },
  { args: ['--itrace=i100nsl', '-F', '+brstack'], i100ns: true },
  { args: ['--itrace=i100nsl4', '-F', '+brstacksym'], i100ns: true },
  { args: ['--itrace=bi0nsl8', '-F', '+brstacksym,+flags'] },
  { args: ['--itrace=i1000il', '-F', 'ip,brstack'] },
  { args: ['--itrace=i97il3', '-F', '+brstacksym,-dso'] },
  { args: ['--itrace=crei10usl2', '-F', '+brstack,+flags'] },
  { args: ['--itrace=i0nsl1', '-F', 'tid,brstack'] },
  // without `l` the samples have no branch stack: perf prints nothing for the field
  { args: ['--itrace=i100ns', '-F', '+brstack'], i100ns: true },
  { args: ['--itrace=l'] },
];

for (const [name, input] of Object.entries(rec)) {
  test(`decode --itrace=…l prints perf's brstack: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    let entries = 0;
    const cases = CASES.filter((c) => !(name === 'userCode' && c.i100ns));
    for (const { args } of cases) {
      const b = compareDecode(t, input, args, name);
      if (b === null) return;
      lines += b.length - 1;
      for (const l of b) entries += l.split('/-/-/-/0/').length - 1;
    }
    t.diagnostic(`${cases.length} option sets, ${lines} lines and ${entries} branch entries equal perf's`);
    assert.ok(entries > 1000, `too few branch entries to compare (${entries})`);
  });
}

test('l takes perf sizes: 1 to 1024, default 64', () => {
  assert.equal(parseItrace('il').lastBranch, 64);
  assert.equal(parseItrace('il1024').lastBranch, 1024);
  assert.equal(parseItrace('i').lastBranch, 0);
  assert.throws(() => parseItrace('il0'), /'l' takes a size of 1 to 1024/);
  assert.throws(() => parseItrace('il1025'), /'l' takes a size of 1 to 1024/);
  const r = runCli(['decode', '-i', rec.pokes, '--itrace=il2000']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^perfpoke: --itrace=il2000: 'l' takes a size of 1 to 1024\n$/);
});
