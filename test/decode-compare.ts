/**
 * Shared by the tests that compare `perfpoke decode` with `perf script
 * --itrace`: run both on one recording with the same options and require the
 * same stdout, naming the first line that differs.
 */
import assert from 'node:assert/strict';
import { runCli, runPerf } from './cli.js';
import { cannotCompare } from './require-tool.js';

/** perf's output lines when ours equals it; null when perf could not run (the test is then failed or skipped). */
export function compareDecode(
  t: { skip(m?: string): void },
  input: string,
  args: string[],
  label = input,
): string[] | null {
  const p = runPerf(['script', '-i', input, ...args]);
  if (p === null || p.status !== 0) {
    cannotCompare(t, `perf script ${args.join(' ')} did not run: ${p?.stderr ?? ''}`);
    return null;
  }
  const ours = runCli(['decode', '-i', input, ...args]);
  assert.equal(ours.status, 0, ours.stderr);
  const a = ours.stdout.split('\n');
  const b = p.stdout.split('\n');
  const first = a.findIndex((l, i) => l !== b[i]);
  assert.equal(
    ours.stdout,
    p.stdout,
    `${args.join(' ')} on ${label}: first difference at line ${first + 1}:\n  ours: ${a[first]}\n  perf: ${b[first]}`,
  );
  return b;
}
