// Builds the optional native recorder addon (src/record/native). Failure is not
// fatal: every command but `record` works without it, and `record` explains
// what is missing.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
if (!existsSync('binding.gyp')) process.exit(0);
const require = createRequire(import.meta.url);
let gyp;
try {
  gyp = require.resolve('node-gyp/bin/node-gyp.js');
} catch {
  console.warn('perfpoke: node-gyp not installed; the recorder addon is not built (perfpoke record will say so)');
  process.exit(0);
}
const r = spawnSync(process.execPath, [gyp, 'rebuild'], { stdio: 'inherit' });
if (r.status !== 0) console.warn('perfpoke: the recorder addon did not build; perfpoke record will be unavailable');
