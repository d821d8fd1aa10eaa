/**
 * Builds (once per process, on demand) and locates the libipt reference
 * harness. Tests call `libiptHarness()` and skip with the returned reason
 * when gcc or libipt-dev is missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const harnessDir = join(here, '..', '..', 'build', 'libipt-harness');

let cached: { ptEnc: string; ptPkts: string } | { skip: string } | undefined;

export function libiptHarness(): { ptEnc: string; ptPkts: string } | { skip: string } {
  if (cached) return cached;
  const ptEnc = join(harnessDir, 'pt-enc');
  const ptPkts = join(harnessDir, 'pt-pkts');
  const srcTime = Math.max(statSync(join(here, 'pt-enc.c')).mtimeMs, statSync(join(here, 'pt-pkts.c')).mtimeMs);
  const fresh = existsSync(ptEnc) && existsSync(ptPkts) && statSync(ptEnc).mtimeMs >= srcTime && statSync(ptPkts).mtimeMs >= srcTime;
  if (!fresh) {
    if (spawnSync('gcc', ['--version']).status !== 0) return (cached = { skip: 'gcc not installed' });
    if (!existsSync('/usr/include/intel-pt.h')) return (cached = { skip: 'libipt-dev not installed (apt-get install -y libipt-dev)' });
    const r = spawnSync('sh', [join(here, 'build.sh'), harnessDir], { encoding: 'utf8' });
    if (r.status !== 0) return (cached = { skip: `libipt harness build failed: ${r.stderr}` });
  }
  return (cached = { ptEnc, ptPkts });
}

/** Encodes a text description (pt-enc syntax) with libipt; throws with libipt's message if it refuses. */
export function libiptEncode(ptEnc: string, description: string): Uint8Array {
  const r = spawnSync(ptEnc, [], { input: description, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`pt-enc: ${r.stderr.toString()}`);
  return new Uint8Array(r.stdout.buffer, r.stdout.byteOffset, r.stdout.byteLength);
}
