/**
 * One rule for tests that compare with a reference (perf 6.1, libipt, binutils,
 * a committed fixture): when the reference cannot run, the test FAILS under CI
 * (`CI=true`, set by .ci/run's caller) — a green CI must mean "compared" — and
 * skips with the reason printed elsewhere. Only what this machine's kernel lacks
 * (see `skipForKernel`) may skip under CI too.
 *
 *   if (!needTool(t, 'perf')) return;
 *   if (perf === null) return cannotCompare(t, 'perf 6.1 did not run');
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The subset of node:test's TestContext used here (also fits a suite's `t`). */
export interface SkippableContext {
  skip(message?: string): void;
}

export type Tool = 'perf' | 'gcc' | 'objdump' | 'readelf' | 'libipt-dev';

export const underCi = process.env.CI === 'true';

const probes: Record<Tool, () => string | null> = {
  perf: () => {
    const r = spawnSync('/usr/bin/perf', ['--version'], { encoding: 'utf8' });
    return !r.error && r.status === 0
      ? null
      : 'perf 6.1 is not installed at /usr/bin/perf (apt-get install linux-perf)';
  },
  gcc: () => (runs('gcc') ? null : 'gcc is not installed (apt-get install gcc)'),
  objdump: () => (runs('objdump') ? null : 'objdump is not installed (apt-get install binutils)'),
  readelf: () => (runs('readelf') ? null : 'readelf is not installed (apt-get install binutils)'),
  'libipt-dev': () =>
    existsSync('/usr/include/intel-pt.h') ? null : 'libipt-dev is not installed (apt-get install libipt-dev)',
};

function runs(cmd: string): boolean {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}

const seen = new Map<Tool, string | null>();

/** null when `tool` is usable here, else why not (probed once per process). */
export function toolMissing(tool: Tool): string | null {
  if (!seen.has(tool)) seen.set(tool, probes[tool]());
  return seen.get(tool) ?? null;
}

/**
 * `reason` null: the reference is there, go on (true). Otherwise fail under CI,
 * else skip printing the reason (false).
 */
export function needReference(t: SkippableContext, reason: string | null | undefined): boolean {
  if (!reason) return true;
  cannotCompare(t, reason);
  return false;
}

/** The comparison cannot run for `reason`: fail under CI, else skip with the reason. */
export function cannotCompare(t: SkippableContext, reason: string): void {
  if (underCi) assert.fail(`reference comparison cannot run under CI=true: ${reason}`);
  t.skip(reason);
}

/** needReference for a tool this file probes itself. */
export function needTool(t: SkippableContext, tool: Tool): boolean {
  return needReference(t, toolMissing(tool));
}

/**
 * A test that needs a kernel feature or privilege this machine lacks: skip, even
 * under CI, with the reason printed (returns false then).
 */
export function skipForKernel(t: SkippableContext, reason: string | null | undefined): boolean {
  if (!reason) return true;
  t.skip(`kernel: ${reason}`);
  return false;
}
