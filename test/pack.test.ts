/**
 * A real package: `npm pack` of a fresh copy (prepack builds dist/) holds the
 * compiled library with types and source maps, the CLI, README, LICENSE, docs
 * and the addon's source — no tests, no fixtures; the tarball installs into an
 * empty project, where `npx perfpoke` runs and a strict TypeScript consumer
 * type-checks against the shipped .d.ts and runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli } from './cli.js';
import { copyTree } from './fresh-copy.js';
import { tempDir } from './temp-dir.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

function sh(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

test('npm pack: dist (types, maps), bin, README, LICENSE, docs; works installed, as CLI and typed library', (t) => {
  const root = tempDir('perfpoke-pack-');
  const src = join(root, 'src');
  copyTree(src);
  symlinkSync(realpathSync(join(repoRoot, 'node_modules')), join(src, 'node_modules'));
  const [info] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', root], src)) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  assert.ok(info);
  const files = info.files.map((f) => f.path);
  t.diagnostic(`${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files`);
  for (const f of [
    'package.json',
    'README.md',
    'LICENSE',
    'bin/perfpoke.js',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/index.js.map',
    'dist/cli/main.js',
    'dist/bundle/main.js',
    'docs/record.md',
    'scripts/build-addon.mjs',
    'src/record/native/binding.gyp',
    'src/record/native/recorder.cc',
  ])
    assert.ok(files.includes(f), `${f} is in the tarball`);
  const unwanted = files.filter((f) => /(^|\/)test\/|fixtures|\.test\.|\.data$|^src\/.*\.ts$|^binding\.gyp$/.test(f));
  assert.deepEqual(unwanted, [], 'no tests, fixtures or TypeScript sources');
  assert.match(readFileSync(join(src, 'LICENSE'), 'utf8'), /GNU GENERAL PUBLIC LICENSE\s+Version 2, June 1991/);
  const map = JSON.parse(readFileSync(join(src, 'dist', 'index.js.map'), 'utf8')) as { sourcesContent?: string[] };
  assert.ok(map.sourcesContent?.[0], 'source maps carry their sources (src/ is not shipped)');

  // an empty project that depends on the tarball
  const app = join(root, 'app');
  sh('mkdir', ['-p', app], root);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  sh(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(root, info.filename), '@types/node@20'],
    app,
  );
  assert.equal(sh('npx', ['--no-install', 'perfpoke', '--version'], app).trim(), pkg.version);
  // with a toolchain on PATH the package's install script built the recorder addon from the shipped source
  const toolchain = ['g++', 'make', 'python3'].every((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0);
  const addon = join(app, 'node_modules', 'perfpoke', 'build', 'Release', 'perfpoke_record.node');
  if (toolchain) assert.ok(existsSync(addon), 'the install script built the addon');
  else t.diagnostic('no toolchain here: the addon build was not exercised');
  const fixture = join(repoRoot, 'test', 'fixtures', 'recorded', 'sw.data');
  const stats = sh('npx', ['--no-install', 'perfpoke', 'stats', '-i', fixture], app);
  assert.equal(stats, runCli(['stats', '-i', fixture]).stdout);
  // report inlines uPlot from the installed `uplot` dependency: the installed package must find it
  const html = join(app, 'report.html');
  sh(
    'npx',
    ['--no-install', 'perfpoke', 'report', '-i', join(repoRoot, 'test/fixtures/real-kernel/perf-alone'), '-o', html],
    app,
  );
  const page = readFileSync(html, 'utf8');
  const uplot = readFileSync(join(app, 'node_modules', 'uplot', 'dist', 'uPlot.iife.min.js'), 'utf8');
  assert.ok(page.includes(uplot), 'the report holds the installed uPlot');

  writeFileSync(
    join(app, 'consumer.ts'),
    `import { openPerfData, RecordType, FormatError, type PerfFile } from 'perfpoke';
const f: PerfFile = await openPerfData(process.argv[2] ?? '');
let samples = 0;
try {
  for await (const r of f.records()) if (r.type === RecordType.SAMPLE) samples++;
} catch (e) {
  if (e instanceof FormatError) console.error(e.offset);
  throw e;
} finally {
  await f.close();
}
const n: number = samples;
console.log(n);
`,
  );
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      types: ['node'],
      outDir: 'out',
    },
    files: ['consumer.ts'],
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
  sh(process.execPath, [tsc, '--noEmit', '-p', '.'], app);
  // the same consumer with a type error must fail: the check is real
  writeFileSync(join(app, 'bad.ts'), `import { openPerfData } from 'perfpoke';\nconst x: string = openPerfData;\n`);
  const bad = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'NodeNext', 'bad.ts'], {
    cwd: app,
    encoding: 'utf8',
  });
  assert.notEqual(bad.status, 0, 'a wrong use of the types is rejected');
  sh(process.execPath, [tsc, '-p', '.'], app);
  const out = sh(process.execPath, [join(app, 'out', 'consumer.js'), fixture], app);
  const want = /SAMPLE events:\s+(\d+)/.exec(stats)?.[1];
  assert.equal(out.trim(), want);
});
