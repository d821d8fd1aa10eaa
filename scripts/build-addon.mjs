// Builds the optional native recorder addon (src/record/native/recorder.cc) into
// build/Release/perfpoke_record.node. It is the package's `install` script, so it
// runs on `npm ci` / `npm install` of a clone and of the published package.
// It never fails the install: without a C++ toolchain (g++ or c++, make, python3)
// it prints one line and exits 0; every command but `record` works without the
// addon, and `record` says what is missing. binding.gyp lives beside the source,
// not at the package root, so npm never runs its implicit `node-gyp rebuild`.
//
// `--required` (used by hand or by CI) turns "not built" into exit 1.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(root, 'src', 'record', 'native');
const target = join(root, 'build', 'Release', 'perfpoke_record.node');
const required = process.argv.includes('--required');

function done(message, ok) {
  console.warn(`perfpoke: ${message}`);
  process.exit(ok || !required ? 0 : 1);
}

function onPath(name) {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (!d) continue;
    try {
      if (statSync(join(d, name)).isFile()) return true;
    } catch {}
  }
  return false;
}

if (process.platform !== 'linux') done('the recorder addon is Linux only; perfpoke record is unavailable', true);
if (!existsSync(join(nativeDir, 'binding.gyp'))) done('no src/record/native/binding.gyp; the addon is not built');

const missing = [];
if (!onPath('g++') && !onPath('c++')) missing.push('g++');
if (!onPath('make')) missing.push('make');
if (!onPath('python3') && !onPath('python')) missing.push('python3');
if (missing.length) {
  done(
    `recorder addon not built (no ${missing.join(', ')} on PATH); all commands but \`record\` work;` +
      ' install them and run `npm rebuild perfpoke` to get `record`',
  );
}

// npm hands its own node-gyp to lifecycle scripts; a clone also has it as a devDependency.
let gyp = process.env.npm_config_node_gyp;
if (!gyp || !existsSync(gyp)) {
  try {
    gyp = createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {
    done('recorder addon not built (node-gyp not found); run `npm rebuild perfpoke` with npm ≥ 7');
  }
}

const args = [gyp, 'rebuild', `--directory=${nativeDir}`];
// Offline, node-gyp cannot download Node's headers: use the installed ones when npm was told no nodedir.
const prefix = dirname(dirname(process.execPath));
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
const built = join(nativeDir, 'build', 'Release', 'perfpoke_record.node');
if (r.status !== 0 || !existsSync(built)) {
  const why = `${r.stderr ?? ''}${r.stdout ?? ''}`
    .split('\n')
    .filter((l) => /error/i.test(l))
    .slice(0, 3)
    .join(' | ');
  const hint = why || 'see npm rebuild perfpoke --foreground-scripts';
  done(`recorder addon did not build (node-gyp exit ${r.status}): ${hint}`);
}
mkdirSync(dirname(target), { recursive: true });
copyFileSync(built, target);
rmSync(join(nativeDir, 'build'), { recursive: true, force: true });
done(`recorder addon built: ${target}`, true);
