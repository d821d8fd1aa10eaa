/** Shared by the record tests: can this machine record, and perf's view of a file. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { repoRoot, runCli, runPerf } from './cli.js';
import { cannotCompare, needTool, type SkippableContext, skipForKernel } from './require-tool.js';

let verdict: string | null | undefined;

const ADDON = join(repoRoot, 'build', 'Release', 'perfpoke_record.node');

/**
 * Can this test record? perf missing (with `perf`, the default) or the addon not built:
 * a comparison that cannot run (fails under CI). The kernel or privileges refusing
 * `perfpoke record -a`: skipped with the reason, CI or not. false = the test must return.
 */
export function canRecord(t: SkippableContext, opts: { perf?: boolean } = {}): boolean {
  if (opts.perf !== false && !needTool(t, 'perf')) return false;
  if (!existsSync(ADDON)) {
    cannotCompare(
      t,
      'the native addon is not built (build/Release/perfpoke_record.node): node scripts/build-addon.mjs',
    );
    return false;
  }
  return skipForKernel(t, cannotRecord());
}

/** null when `perfpoke record -a` works here, else the reason to skip (probed once per process). */
export function cannotRecord(): string | null {
  if (verdict === undefined) verdict = probeRecord();
  return verdict;
}

function probeRecord(): string | null {
  if (!existsSync(ADDON)) return 'the native addon is not built (build/Release/perfpoke_record.node)';
  let paranoid = '?';
  try {
    paranoid = readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim();
  } catch {
    return 'no /proc/sys/kernel/perf_event_paranoid: not a perf-capable kernel';
  }
  const dir = scratch('probe');
  const r = runCli(['record', '-a', '-o', join(dir, 'probe.data'), '--', 'true']);
  if (r.status === 0) return null;
  const who = `perf_event_paranoid ${paranoid}, uid ${process.getuid?.()}`;
  return `perfpoke record -a fails here (${who}): ${r.stderr.trim()}`;
}

export function perfMissing(): string | null {
  const r = runPerf(['--version']);
  return r && r.status === 0 ? null : '/usr/bin/perf is not installed';
}

const scratchRoot = join(tmpdir(), `perfpoke-record-test-${process.pid}`);
let cleanupArmed = false;

/** A folder under one per-process scratch root, removed when the test process exits. */
export function scratch(name: string): string {
  if (!cleanupArmed) {
    cleanupArmed = true;
    process.on('exit', () => rmSync(scratchRoot, { recursive: true, force: true }));
  }
  const d = join(scratchRoot, name);
  mkdirSync(d, { recursive: true });
  return d;
}

/** `perf report --stats` as { TYPE: count }. */
export function perfStats(file: string): { counts: Record<string, number>; stderr: string } {
  const r = runPerf(['report', '--stats', '-i', file]);
  if (!r) throw new Error('perf missing');
  const counts: Record<string, number> = {};
  for (const m of r.stdout.matchAll(/^\s*(\w+) events:\s+(\d+)/gm)) {
    if (m[1] !== 'TOTAL') counts[m[1]!] = Number(m[2]);
  }
  return { counts, stderr: r.stderr };
}

/** Build tools/bpf-load with gcc into a scratch folder; null when gcc is missing. */
export function buildBpfLoad(): string | null {
  const out = join(scratch('bin'), 'bpf-load');
  if (existsSync(out)) return out;
  const r = spawnSync('gcc', ['-O2', '-Wall', '-o', out, join(repoRoot, 'tools', 'bpf-load', 'bpf-load.c')], {
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0) return null;
  return out;
}
