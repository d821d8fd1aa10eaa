/**
 * Builds (once per process, on demand) and locates the libipt reference
 * harness. Tests call `libiptHarness()` and, when gcc or libipt-dev is
 * missing, pass the returned reason to test/require-tool.ts's cannotCompare:
 * a failure under CI (.ci/run installs libipt-dev), a printed skip elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const harnessDir = join(here, '..', '..', 'build', 'libipt-harness');

let cached: { ptEnc: string; ptPkts: string } | { skip: string } | undefined;

export function libiptHarness(): { ptEnc: string; ptPkts: string } | { skip: string } {
  cached ??= buildHarness();
  return cached;
}

function buildHarness(): { ptEnc: string; ptPkts: string } | { skip: string } {
  const ptEnc = join(harnessDir, 'pt-enc');
  const ptPkts = join(harnessDir, 'pt-pkts');
  const srcTime = Math.max(statSync(join(here, 'pt-enc.c')).mtimeMs, statSync(join(here, 'pt-pkts.c')).mtimeMs);
  const fresh =
    existsSync(ptEnc) &&
    existsSync(ptPkts) &&
    statSync(ptEnc).mtimeMs >= srcTime &&
    statSync(ptPkts).mtimeMs >= srcTime;
  if (!fresh) {
    if (spawnSync('gcc', ['--version']).status !== 0) return { skip: 'gcc not installed' };
    if (!existsSync('/usr/include/intel-pt.h'))
      return { skip: 'libipt-dev not installed (apt-get install -y libipt-dev)' };
    const r = spawnSync('sh', [join(here, 'build.sh'), harnessDir], { encoding: 'utf8' });
    if (r.status !== 0) return { skip: `libipt harness build failed: ${r.stderr}` };
  }
  return { ptEnc, ptPkts };
}

/** Encodes a text description (pt-enc syntax) with libipt; throws with libipt's message if it refuses. */
export function libiptEncode(ptEnc: string, description: string): Uint8Array {
  const r = spawnSync(ptEnc, [], { input: description, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`pt-enc: ${r.stderr.toString()}`);
  return new Uint8Array(r.stdout.buffer, r.stdout.byteOffset, r.stdout.byteLength);
}

/** Encodes several descriptions with one pt-enc process (streams separated by "---"). */
export function libiptEncodeMany(ptEnc: string, descriptions: string[], dir: string): Uint8Array[] {
  const files = descriptions.map((_d, k) => join(dir, `enc-${k}.pt`));
  const r = spawnSync(ptEnc, files, { input: descriptions.join('---\n'), maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`pt-enc: ${r.stderr.toString()}`);
  return files.map((f) => new Uint8Array(readFileSync(f)));
}

/** Runs pt-pkts (optionally --ptdump) over several files with one process; one array of lines per file. */
export function libiptPackets(ptPkts: string, files: string[], ptdump = false): string[][] {
  const r = spawnSync(ptPkts, [...(ptdump ? ['--ptdump'] : []), ...files], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`pt-pkts: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  if (files.length === 1) return [lines.filter(Boolean)];
  const out: string[][] = [];
  for (const l of lines) {
    if (l.startsWith('== ')) out.push([]);
    else if (l) out[out.length - 1]!.push(l);
  }
  return out;
}
