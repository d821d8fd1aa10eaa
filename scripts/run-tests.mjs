// Runs every *.test.ts under src/ and test/ with node's test runner (Node 20 does
// not search directories for .ts files itself). Extra args are passed through,
// e.g. `node scripts/run-tests.mjs src/intelpt` to run one folder.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function collect(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['src', 'test'];
const files = roots.flatMap((r) => (r.endsWith('.test.ts') ? [r] : collect(r, [])));
if (files.length === 0) {
  console.error('run-tests: no *.test.ts files found under', roots.join(' '));
  process.exit(1);
}
// spec output, with failing todo tests shown as todos (scripts/test-reporter.mjs)
const reporter = fileURLToPath(new URL('./test-reporter.mjs', import.meta.url));
const seed = fileURLToPath(new URL('./fc-seed.mjs', import.meta.url));
const args = ['--import', 'tsx', '--import', seed, '--test', `--test-reporter=${reporter}`, ...files];
const r = spawnSync(process.execPath, args, {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
