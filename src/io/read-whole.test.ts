import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readWholeFile } from './read-whole.js';

test('readWholeFile gives the bytes readFileSync gives, for any size', () => {
  const dir = mkdtempSync(join(tmpdir(), 'read-whole-'));
  try {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), (bytes) => {
        const p = join(dir, 'f');
        writeFileSync(p, bytes);
        assert.deepEqual(new Uint8Array(readWholeFile(p)), bytes);
      }),
      { numRuns: 50 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('readWholeFile reads a procfs file that states no size', () => {
  // /proc/self/status: size 0 in stat, content not
  const a = readWholeFile('/proc/self/status').toString('latin1');
  assert.match(a, /^Name:/);
  assert.equal(a.split('\n')[0], readFileSync('/proc/self/status', 'latin1').split('\n')[0]);
});

test('readWholeFile throws the fs error of a missing file', () => {
  assert.throws(
    () => readWholeFile('/nonexistent/file'),
    (e: unknown) => (e as { code?: string }).code === 'ENOENT',
  );
});
