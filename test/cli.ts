/** Test helper: run the CLI from source (no build needed) and capture its output. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const mainTs = join(repoRoot, 'src', 'cli', 'main.ts');
// tsx by absolute URL, so that the CLI runs from any working directory (a user's folder, a temp dir)
const tsxLoader = import.meta.resolve('tsx');

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { input?: string | Buffer; cwd?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, ['--import', tsxLoader, mainTs, ...args], {
    cwd: opts.cwd ?? repoRoot,
    input: opts.input,
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  });
  return { status: r.status ?? -1, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

/** Run perf 6.1 (or skip-worthy null when it is missing). */
export function runPerf(args: string[], opts: { input?: Buffer; cwd?: string } = {}): CliResult | null {
  const r = spawnSync('/usr/bin/perf', args, {
    cwd: opts.cwd ?? repoRoot,
    input: opts.input,
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  });
  if (r.error) return null;
  return { status: r.status ?? -1, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}
