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
  assert.ok(sum.readsOk > count / 10 && sum.formatErrors > count / 10, JSON.stringify(sum.byMutator));
});
