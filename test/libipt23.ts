/**
 * Intel's own libipt 2.3 tools (ptdump, ptxed: static binaries, libipt
 * 2.3.0-devel with XED), found through LIBIPT23_BIN (the folder holding
 * both; .ci/run sets it where the machine has them). They are not in any
 * package registry, so without LIBIPT23_BIN the comparisons skip with the
 * reason printed; with it set, a missing or wrong tool fails under CI=true
 * (require-tool's cannotCompare).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cannotCompare, type SkippableContext } from './require-tool.js';

export const libipt23Dir = process.env.LIBIPT23_BIN;

export function libipt23Tools(): { ptdump: string; ptxed: string } | { skip: string } {
  if (!libipt23Dir) return { skip: 'LIBIPT23_BIN is not set (the folder of libipt 2.3 ptdump and ptxed)' };
  const ptdump = join(libipt23Dir, 'ptdump');
  const ptxed = join(libipt23Dir, 'ptxed');
  if (!existsSync(ptdump) || !existsSync(ptxed)) return { skip: `libipt 2.3 tools not found in ${libipt23Dir}` };
  const v = spawnSync(ptdump, ['--version'], { encoding: 'utf8' });
  if (v.status !== 0 || !v.stdout.includes('libipt-2.3'))
    return { skip: `${ptdump} --version: ${v.stdout}${v.stderr}` };
  return { ptdump, ptxed };
}

/** Without LIBIPT23_BIN: skip, saying why; with it: the tool must run (a failure under CI). */
export function noLibipt23(t: SkippableContext, why: string): void {
  if (!libipt23Dir) {
    t.skip(why);
    return;
  }
  cannotCompare(t, why);
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
