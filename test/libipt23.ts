/**
 * Intel's own libipt 2.3 tools (ptdump, ptxed: static binaries, libipt
 * 2.3.0-devel with XED) at ../shared/tools/libipt-2.3/bin beside the
 * repository (CI has ../shared). Nothing of them is copied into the repo;
 * a test that needs them passes the `skip` reason to require-tool's
 * cannotCompare (a failure under CI=true).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

export const libipt23Dir = join(repoRoot, '..', 'shared', 'tools', 'libipt-2.3', 'bin');

export function libipt23Tools(): { ptdump: string; ptxed: string } | { skip: string } {
  const ptdump = join(libipt23Dir, 'ptdump');
  const ptxed = join(libipt23Dir, 'ptxed');
  if (!existsSync(ptdump) || !existsSync(ptxed)) return { skip: `libipt 2.3 tools not found in ${libipt23Dir}` };
  const v = spawnSync(ptdump, ['--version'], { encoding: 'utf8' });
  if (v.status !== 0 || !v.stdout.includes('libipt-2.3'))
    return { skip: `${ptdump} --version: ${v.stdout}${v.stderr}` };
  return { ptdump, ptxed };
}

/**
 * Runs `tool ...args` for every job with one shell (a process spawn per run
 * from node is what dominates otherwise); returns each run's stdout.
 */
export function runEach(tool: string, jobs: string[][]): string[] {
  const mark = '@@perfpoke-run-end@@';
  const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  const script = jobs.map((args) => `${[tool, ...args].map(q).join(' ')} 2>/dev/null; echo ${mark}`).join('\n');
  const r = spawnSync('sh', [], { input: script, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`sh: ${r.error?.message ?? r.stderr}`);
  const outs = r.stdout.split(`${mark}\n`);
  outs.pop();
  if (outs.length !== jobs.length) throw new Error(`runEach: ${outs.length} outputs for ${jobs.length} runs`);
  return outs;
}
