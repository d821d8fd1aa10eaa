/**
 * Inputs as perf users pass them (issue: "Inputs as perf users pass them"):
 * every command that reads a recording takes `-i FILE`, `-i DIR` (a
 * `perf record --kcore` directory), `-i -` (a pipe on stdin) and, with no
 * `-i`, ./perf.data (file or directory); a bad path is one line, exit 2, and
 * never a stack trace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, repoRoot } from './cli.js';
import { tempDir } from './temp-dir.js';

const REC = join(repoRoot, 'test', 'fixtures', 'real-kernel', 'perfpoke-kcore');
const PIPE = join(repoRoot, 'test', 'fixtures', 'features', 'pipe.data');

/** Commands that read a recording, with the extra arguments each needs. */
const READERS: [string, string[]][] = [
  ['stats', []],
  ['dump', []],
  ['header', []],
  ['script', []],
  ['pt-dump', []],
  ['check', []],
  ['pokes', []],
  ['image', ['--addr', '0xffffffff810df61e', '--len', '8']],
];

const oneLine = (stderr: string, what: string) => {
  const lines = stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${stderr}`);
  assert.ok(!/\n\s+at /.test(stderr) && !/node:internal/.test(stderr), `${what}: no stack trace:\n${stderr}`);
  assert.match(lines[0]!, /^perfpoke: /, what);
};

test('-i DIR (a --kcore directory) reads DIR/data: the same output as -i DIR/data', () => {
  for (const [cmd, extra] of READERS) {
    if (cmd === 'check' || cmd === 'pokes' || cmd === 'image') continue; // these use kcore_dir: compared below
    const dir = runCli([cmd, '-i', REC, ...extra]);
    const file = runCli([cmd, '-i', join(REC, 'data'), ...extra]);
    assert.equal(dir.status, 0, `${cmd} -i DIR: ${dir.stderr}`);
    assert.equal(dir.stdout, file.stdout, `${cmd}: -i DIR and -i DIR/data print the same`);
  }
  // the machine commands see DIR/kcore_dir only through the directory
  const check = runCli(['check', '-i', REC]);
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stdout, /\nconsistent\n$/);
});

test('no -i: ./perf.data as a --kcore directory and as a file, like perf', () => {
  const cwd = tempDir('perfpoke-inputs-');
  cpSync(REC, join(cwd, 'perf.data'), { recursive: true, preserveTimestamps: true });
  for (const [cmd, extra] of READERS) {
    const here = runCli([cmd, ...extra], { cwd });
    const given = runCli([cmd, '-i', REC, ...extra]);
    assert.equal(here.status, given.status, `${cmd} in a folder with perf.data/: ${here.stderr}`);
    assert.equal(here.stdout, given.stdout.replaceAll(REC, 'perf.data'), `${cmd}: same output as -i DIR`);
  }
  const flat = tempDir('perfpoke-inputs-');
  cpSync(join(REC, 'data'), join(flat, 'perf.data'), { preserveTimestamps: true });
  const st = runCli(['stats'], { cwd: flat });
  assert.equal(st.status, 0, st.stderr);
  assert.equal(st.stdout, runCli(['stats', '-i', join(REC, 'data')]).stdout);
});

test('-i - reads a pipe-mode recording from stdin (perf record -o - | …)', () => {
  const bytes = readFileSync(PIPE);
  for (const cmd of ['stats', 'dump', 'header', 'script']) {
    const piped = runCli([cmd, '-i', '-'], { input: bytes });
    const file = runCli([cmd, '-i', PIPE]);
    assert.equal(piped.status, 0, `${cmd} -i -: ${piped.stderr}`);
    if (cmd === 'header') {
      // perf prints the file's mtime as "captured on"; a pipe has none
      const drop = (s: string) => s.replace(/^# captured on.*\n/m, '');
      assert.equal(drop(piped.stdout), drop(file.stdout), cmd);
    } else assert.equal(piped.stdout, file.stdout, cmd);
  }
});

test('bad paths: one line naming the path and the problem, exit 2, no stack trace', () => {
  const dir = tempDir('perfpoke-inputs-');
  mkdirSync(join(dir, 'empty-dir'));
  writeFileSync(join(dir, 'empty.data'), '');
  writeFileSync(join(dir, 'locked.data'), readFileSync(PIPE));
  chmodSync(join(dir, 'locked.data'), 0);
  const cases: [string, RegExp][] = [
    [join(dir, 'missing.data'), /missing\.data: no such file or directory$/],
    [join(dir, 'empty-dir'), /empty-dir: a directory without data/],
    [join(dir, 'empty.data'), /empty\.data: at offset 0x0: /],
  ];
  for (const [path, want] of cases) {
    // every reader on a missing path; the readers of each kind (file, header, machine) on the others
    const readers = want === cases[0]![1] ? READERS : READERS.filter(([c]) => ['stats', 'header', 'check'].includes(c));
    for (const [cmd, extra] of readers) {
      const r = runCli([cmd, '-i', path, ...extra]);
      assert.equal(r.status, 2, `${cmd} -i ${path}: exit ${r.status}\n${r.stderr}`);
      oneLine(r.stderr, `${cmd} -i ${path}`);
      assert.match(r.stderr.trim(), want, `${cmd} -i ${path}`);
      assert.equal(r.stdout, '', `${cmd} -i ${path}: nothing on stdout`);
    }
  }
  const none = runCli(['stats'], { cwd: dir });
  assert.equal(none.status, 2);
  oneLine(none.stderr, 'stats with no -i and no ./perf.data');
  assert.match(none.stderr, /perf\.data: no such file or directory/);
  // root reads a mode-0 file anyway; the permission case is real only for other users
  if (process.getuid?.() !== 0) {
    const r = runCli(['stats', '-i', join(dir, 'locked.data')]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /locked\.data: permission denied/);
  }
});
