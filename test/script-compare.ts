/**
 * Shared by the tests that compare `perfpoke script` with `perf script`: run
 * our command in-process through its own option parser, and show where two
 * outputs first differ.
 */
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { register, runScript, StringSink, toScriptOptions, type ScriptCliOptions } from '../src/cli/commands/script.js';
import type { EventAttr } from '../src/abi/event-attr.js';
import { PERF_RECORD_MISC_USER, RecordType } from '../src/abi/record-type.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import { PerfDataWriter } from '../src/perfdata/writer.js';
import { runPerf } from './cli.js';

/** Parse `args` with the script command's own commander definition, then run it in-process (stdout only). */
export async function scriptInProcess(file: string, args: string[]): Promise<{ out: string; err?: string }> {
  const program = new Command().exitOverride();
  register(program);
  let parsed: ScriptCliOptions | undefined;
  const cmd = program.commands.find((c) => c.name() === 'script');
  if (!cmd) throw new Error('no script command');
  cmd.exitOverride().action((o: ScriptCliOptions) => {
    parsed = o;
  });
  const sink = new StringSink();
  try {
    await program.parseAsync(['script', '-i', file, ...args], { from: 'user' });
    if (!parsed) throw new Error('script: options not parsed');
    await runScript(file, { ...toScriptOptions(parsed), quiet: true }, sink);
    return { out: sink.text };
  } catch (e) {
    return { out: sink.text, err: (e as Error).message };
  }
}

/** "equal", or the first line where `ours` and `perf` differ. */
export function firstDiff(ours: string, perf: string): string {
  const x = ours.split('\n');
  const y = perf.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `line ${i + 1}:\n  ours: ${JSON.stringify(x[i])}\n  perf: ${JSON.stringify(y[i])}`;
  return 'equal';
}

/**
 * Write `records` as `file`, one cpu-clock event of `attr`, and return what
 * `perf script` prints for it (it must succeed) and what ours prints.
 */
export async function scriptBoth(
  file: string,
  attr: EventAttr,
  records: PerfRecord[],
): Promise<{ theirs: string; mine: string }> {
  const w = await PerfDataWriter.create(file, [{ attr, ids: [], name: 'cpu-clock' }]);
  for (const r of records) await w.write(r, 0);
  await w.finish();
  const perf = runPerf(['script', '-i', file]);
  assert.ok(perf && perf.status === 0, perf?.stderr.toString());
  return { theirs: perf.stdout.toString(), mine: (await scriptInProcess(file, [])).out };
}

/** A user-mode sample of thread `pid` of process `pid` at `ip`, period 1000 (the synthetic comparisons' samples). */
export function userSample(ip: bigint, pid: number, time: bigint, callchain?: bigint[]): PerfRecord {
  const head = { type: RecordType.SAMPLE, misc: PERF_RECORD_MISC_USER, size: 0, fileOffset: 0 };
  return { kind: 'sample', ...head, ip, pid, tid: pid, time, period: 1000n, ...(callchain && { callchain }) };
}
