/**
 * The mutation fuzzer, short run (npm run fuzz is the long one): mutants of every
 * committed fixture through the library's readers in-process — records and their
 * decoding, feature sections, sessions (stats, ordered events), machine loading
 * and the image check. Each reader must end in data or in one FormatError naming
 * the file offset; no other exception, no allocation above the file's size, no
 * mutant taking longer than the time bound (test/fuzz-driver.ts).
 * FUZZ_MUTANTS and FUZZ_SEED override the count and the seed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';
import { FormatError } from '../src/io/errors.js';
import { runFuzz } from './fuzz-driver.js';
import { tempDir } from './temp-dir.js';

const count = Number(process.env.FUZZ_MUTANTS ?? 2000);
const seed = Number(process.env.FUZZ_SEED ?? 20260101);

test(`fuzz: ${count} mutants of the fixtures end as data or a one-line FormatError (seed ${seed})`, async (t) => {
  const sum = await runFuzz({ count, seed, scratch: tempDir('perfpoke-fuzz-') });
  t.diagnostic(
    `${sum.mutants} mutants in ${sum.seconds.toFixed(1)} s: ${sum.readsOk} reads to the end, ` +
      `${sum.formatErrors} FormatErrors, ${sum.failures.length} failures; slowest ${sum.slowest.ms.toFixed(0)} ms; ` +
      `largest allocation ${sum.biggest.bytes} B (mutant of ${sum.biggest.size} B)`,
  );
  const shown = sum.failures
    .slice(0, 10)
    .map((f) => `#${f.index} ${f.fixture} [${f.what}]: ${f.problem}`)
    .join('\n');
  assert.deepEqual(shown, '', `rebuild with mutant(fixture, ${seed}, index) from test/fuzz-mutate.ts`);
  assert.equal(sum.mutants, count);
  // both outcomes occur: the mutants are neither all harmless nor all rejected at the header
  if (count >= 100) assert.ok(sum.readsOk > count / 10 && sum.formatErrors > count / 10, JSON.stringify(sum.byMutator));
});

test('a COMPRESSED record whose zstd frame declares a 1 GiB window is refused before allocating it', async () => {
  // found by the fuzzer: fzstd allocates the declared window up front
  const { openPerfData } = await import('../src/perfdata/open.js');
  const src = new Uint8Array(readFileSync(join(repoRoot, 'test', 'fixtures', 'features', 'compressed.data')));
  const frame = Buffer.from(src).indexOf(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
  assert.ok(frame > 0, 'the fixture holds a zstd frame');
  const bad = src.slice();
  bad[frame + 5] = 0xa0; // window descriptor: 2^(10+20) bytes
  const p = join(tempDir('perfpoke-zstd-'), 'big-window.data');
  writeFileSync(p, bad);
  const before = process.memoryUsage().arrayBuffers;
  const f = await openPerfData(p);
  await assert.rejects(
    async () => {
      for await (const r of f.records()) r.decode();
    },
    (e: Error) =>
      e instanceof FormatError &&
      e.offset === frame &&
      /zstd window of at most 8388608 bytes/.test(e.message) &&
      !e.message.includes('\n'),
  );
  await f.close();
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 << 20, 'no window was allocated');
});
