/**
 * perf's sync_switch: on recordings whose kernel map has `__switch_to` (real
 * `perf record -a` ones) perf 6.1 moves a CPU to the next task at the branch
 * to `__switch_to`, stopping the CPU's decoding there until the switch-out
 * record when the trace gets there first. The simulator's `switchTo` runs
 * every context switch through `__schedule` → `__perf_event_task_sched_out`
 * (the switch-out record) and `__switch_to_asm` → `__switch_to` (the
 * switch-in record after it), on 2 CPUs with several tasks each. Whole outputs
 * of `perfpoke decode` are compared with perf 6.1's: with text pokes, without
 * them (kernel errors turn sync_switch off for their CPU), and with a
 * `cycles:k` event's samples among the synthesized ones. perf is the
 * reference: the test fails under CI when it cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needTool } from './require-tool.js';
import { compareDecode } from './decode-compare.js';
import { simulateRecordings } from './decode-recordings.js';

const rec = simulateRecordings('perfpoke-decode-sync-switch-', ['syncSwitch', 'syncSwitchNoPokes', 'syncSwitchCycles']);

const CASES: string[][] = [
  ['--itrace=i0ns'],
  ['--itrace=be'],
  ['--itrace=ce'],
  ['--itrace=e'],
  ['--itrace=x'],
  ['--itrace=i100ns'],
  ['--itrace=be', '-F', '+pid'],
  ['--itrace=cre', '-F', '+flags'],
];

/** Lines of perf's `-F cpu,tid,ip,sym` output where the task changes at `__switch_to`'s first instruction. */
function switchesAtSwitchTo(lines: string[]): number {
  const last = new Map<string, string>();
  let n = 0;
  for (const l of lines) {
    const m = /^\s*(-?\d+)\s+\[(\d+)\]\s+[0-9a-f]+\s+(\S+)/.exec(l);
    if (!m) continue;
    const [, tid, cpu, sym] = m as unknown as [string, string, string, string];
    const before = last.get(cpu);
    if (sym === '__switch_to' && before !== undefined && before !== tid && last.get(`${cpu}:sym`) !== sym) n++;
    last.set(cpu, tid);
    last.set(`${cpu}:sym`, sym);
  }
  return n;
}

for (const [name, input] of Object.entries(rec)) {
  test(`decode switches tasks at __switch_to as perf script does (sync_switch): ${name}`, { timeout: 600_000 }, (t) => {
    if (!needTool(t, 'perf')) return;
    let lines = 0;
    for (const args of CASES) lines += (compareDecode(t, input, args, name) ?? []).length;
    // the recording is one perf decodes with sync_switch: tasks change at the branch to __switch_to
    const perf = compareDecode(t, input, ['--itrace=i0ns', '-F', 'cpu,tid,ip,sym'], name);
    if (perf === null) return;
    const at = switchesAtSwitchTo(perf);
    assert.ok(at >= 3, `${name}: perf switched tasks at __switch_to ${at} times`);
    t.diagnostic(`${name}: ${lines + perf.length} lines equal to perf's, ${at} task changes at __switch_to`);
  });
}
