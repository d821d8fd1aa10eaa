/**
 * The benches measure perfpoke as users run it: compiled with tsc and
 * bundled (what `npm run build` does, bin/perfpoke.js then runs the bundle),
 * into bench/out/dist, once per bench run.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const dist = join(root, 'bench', 'out', 'dist');
let built: boolean | undefined;

/** Compile once; false when tsc failed (the caller then says so). */
export function buildDist(): boolean {
  if (built !== undefined) return built;
  spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', dist],
    { cwd: root, stdio: 'ignore' },
  );
  // the CLI reads its version from ../../package.json, as in the package
  copyFileSync(join(root, 'package.json'), join(dist, '..', 'package.json'));
  spawnSync(process.execPath, [join(root, 'scripts', 'bundle-cli.mjs'), dist], { cwd: root, stdio: 'ignore' });
  built = existsSync(join(dist, 'bundle', 'main.js'));
  return built;
}

/** argv for the built CLI (the bundle, as bin/perfpoke.js runs it). */
export const cli = (...args: string[]): string[] => [process.execPath, join(dist, 'bundle', 'main.js'), ...args];
