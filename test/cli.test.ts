import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './cli.js';

test('perfpoke --help lists commands and exits 0', () => {
  const r = runCli(['--help']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: perfpoke/);
});

test('unknown command exits 2', () => {
  const r = runCli(['no-such-command']);
  assert.equal(r.status, 2);
});
