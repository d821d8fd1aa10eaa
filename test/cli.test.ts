import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli } from './cli.js';

test('perfpoke --help lists commands and exits 0', () => {
  const r = runCli(['--help']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: perfpoke/);
});

test('unknown command exits 2', () => {
  const r = runCli(['no-such-command']);
  assert.equal(r.status, 2);
});

test('a directory without data where a recording is expected: one line naming it, exit 2, no stack trace', () => {
  for (const cmd of ['stats', 'header', 'dump']) {
    const r = runCli([cmd, '-i', 'test/fixtures/recorded']);
    assert.equal(r.status, 2, `${cmd}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      'perfpoke: test/fixtures/recorded: a directory without data (expected a `perf record --kcore` directory)\n',
    );
  }
});

test('a file-mode perf.data on stdin: one line saying to pass it by path, exit 2', () => {
  const data = readFileSync(join(repoRoot, 'test', 'fixtures', 'recorded', 'callchain.data'));
  for (const cmd of ['script', 'stats', 'dump']) {
    const r = runCli([cmd, '-i', '-'], { input: data });
    assert.equal(r.status, 2, `${cmd}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      'perfpoke: -: at offset 0x8: perf_file_header.size: unsupported 104, expected 16 (pipe mode) on a stream; ' +
        'a file-mode perf.data is read by path (-i FILE)\n',
      cmd,
    );
  }
});
