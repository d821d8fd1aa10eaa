// Bundles the compiled CLI (dist/cli/main.js, from tsc) with esbuild into
// dist/bundle/: one entry and one chunk per command, npm packages left as
// imports. Node's ESM loader costs about 0.3 ms per module file, and the CLI
// is ~300 of them: the bundle makes each command start ~50 ms sooner, and
// `--help`, which loads every command, ~4 times sooner. dist/bundle sits two
// levels below the package root, as dist/cli does, so paths that modules
// derive from their own location (package.json, the native addon) still hold.
// bin/perfpoke.js runs the bundle when it exists, else dist/cli/main.js.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = process.argv[2] ?? join(root, 'dist');
const outdir = join(dist, 'bundle');
rmSync(outdir, { recursive: true, force: true });
try {
  await build({
    entryPoints: { main: join(dist, 'cli', 'main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
} catch (e) {
  process.stderr.write(`bundle-cli: esbuild failed: ${e?.message ?? e}\n`);
  process.exit(1);
}
