#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` via prepare).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(`perfpoke: ${main} is missing; run "npm run build" (npm ci does it)\n`);
  process.exit(2);
}
await import(pathToFileURL(main).href);
