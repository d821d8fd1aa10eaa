/**
 * For the install and pack tests: a copy of the working tree as a fresh clone
 * would have it (tracked and new, non-ignored files: no node_modules, dist or
 * build), and a PATH that hides the C/C++ toolchain.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './cli.js';

/** Copy the files a clone holds (plus uncommitted, non-ignored ones) into `dest`. */
export function copyTree(dest: string): void {
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ls-files: ${r.stderr}`);
  for (const f of r.stdout.split('\0')) {
    if (!f || f === 'node_modules' || f.startsWith('node_modules/')) continue;
    const to = join(dest, f);
    mkdirSync(dirname(to), { recursive: true });
    try {
      copyFileSync(join(repoRoot, f), to);
    } catch (e) {
      // a tracked file deleted in the working tree is not part of the copy
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}

/**
 * A bin folder holding only node, npm, npx, git and sh (no gcc, g++, cc, make,
 * python3): the PATH of a machine without a compiler.
 */
export function compilerFreePath(binDir: string): string {
  mkdirSync(binDir, { recursive: true });
  for (const tool of ['node', 'npm', 'npx', 'git', 'sh']) {
    const w = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
    const at = w.stdout.trim();
    if (w.status !== 0 || !at) throw new Error(`${tool} is not on PATH`);
    symlinkSync(realpathSync(at), join(binDir, tool));
  }
  return binDir;
}

/** Hidden from compilerFreePath's PATH: each must fail to resolve. */
export const HIDDEN_TOOLS = ['gcc', 'g++', 'cc', 'c++', 'make', 'python3', 'python'];
