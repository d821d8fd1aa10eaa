/**
 * perf script's branch `flags` column and call-trace fields on decode: whole
 * outputs of `perfpoke decode` compared byte for byte with perf 6.1's `perf
 * script` on simulated recordings (several tasks via `tasks`; with text
 * pokes, without them and with errors, user code traced without its binary,
 * another event's samples). perf is the reference: the test fails under CI
 * when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needTool } from './require-tool.js';
import { simulateRecordings } from './decode-recordings.js';
import { compareDecode } from './decode-compare.js';

const rec = simulateRecordings('perfpoke-decode-calltrace-', ['pokes', 'noPokes', 'userCode', 'cycles']);

/** Option sets; each must give perf's output on every recording. */
export const CALLTRACE_CASES: string[][] = [
  ['--itrace=be', '-F', '+flags'],
  ['--itrace=i0nse', '-F', '+flags'],
  ['--itrace=cre', '-F', '+flags'],
  ['--itrace=i100ns', '-F', '+flags'],
  ['--itrace=ibe', '-F', 'comm,tid,cpu,time,flags,ip,sym,addr'],
  ['--itrace=be', '-F', 'flags,ip,addr'],
  // what --call-trace / --call-ret-trace print, less their p (power) events
  ['--itrace=ce', '-F', '-ip,-addr,-event,-period,+callindent'],
  ['--itrace=cre', '-F', '-ip,-addr,-event,-period,+callindent,+flags'],
  ['--itrace=be', '-F', '+callindent'],
  ['--itrace=bei0ns', '-F', '+flags,+callindent'],
];

for (const [name, input] of Object.entries(rec)) {
  test(`decode prints perf's flags and call-trace columns: ${name} recording`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    const flags = new Set<string>();
    // user code: i100ns still differs from perf there, flags or not (docs/intel-pt-flow.md)
    const cases = CALLTRACE_CASES.filter((c) => !(name === 'userCode' && c[0] === '--itrace=i100ns'));
    for (const args of cases) {
      const b = compareDecode(t, input, args, name);
      if (b === null) return;
      lines += b.length - 1;
      for (const l of b) {
        const m = /branches:[a-z]+: {3}(\S+(?: \S+)*?) {2}/.exec(l);
        if (m?.[1]) flags.add(m[1]);
      }
    }
    t.diagnostic(`${cases.length} option sets, ${lines} lines equal perf's; flags: ${[...flags].join(', ')}`);
    // the recordings must show perf's main branch kinds, trace begins and ends among them
    for (const k of ['call', 'return', 'jcc', 'tr strt']) assert.ok(flags.has(k), `no '${k}' branch: ${[...flags]}`);
  });
}
