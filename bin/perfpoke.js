#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` via prepare):
// dist/bundle/main.js, the esbuild bundle that starts faster, or, when it is
// absent (a plain tsc build), dist/cli/main.js.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundled = join(root, 'dist', 'bundle', 'main.js');
const main = existsSync(bundled) ? bundled : join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(`perfpoke: ${main} is missing; run "npm run build" (npm ci does it)\n`);
  process.exit(2);
}
await import(pathToFileURL(main).href);
