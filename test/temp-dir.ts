/**
 * Temp folders for tests: made under the OS temp dir and removed when the test
 * process exits (each test file runs in its own process), pass or fail, so a
 * run leaves /tmp as it found it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.length === 0)
    process.on('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  made.push(dir);
  return dir;
}
