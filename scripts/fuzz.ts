/**
 * `npm run fuzz`: the long run of the in-process mutation fuzzer
 * (test/fuzz-driver.ts) — 10 000 mutants by default.
 *   node --import tsx scripts/fuzz.ts [--count N] [--seed S] [--json]
 * Exits 1 when any mutant crashed a reader, hung, or allocated more than the file's size.
 */
import { parseArgs } from 'node:util';
import { runFuzz } from '../test/fuzz-driver.js';
import { tempDir } from '../test/temp-dir.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    json: { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
let shown = 0;
const sum = await runFuzz({
  count,
  seed,
  scratch: tempDir('perfpoke-fuzz-'),
  onProgress: (n) => {
    if (n - shown >= 1000 && process.stderr.isTTY) {
      shown = n;
      process.stderr.write(`\r${n}/${count}`);
    }
  },
});
if (process.stderr.isTTY) process.stderr.write('\r');
if (values.json) process.stdout.write(`${JSON.stringify(sum, null, 2)}\n`);
else {
  console.log(
    `fuzz: seed ${seed}, ${sum.mutants} mutants in ${sum.seconds.toFixed(1)} s; ` +
      `reader runs: ${sum.readsOk} read to the end, ` +
      `${sum.formatErrors} FormatError; ${sum.failures.length} failures`,
  );
  console.log(
    `slowest mutant ${sum.slowest.ms.toFixed(0)} ms (#${sum.slowest.index}); ` +
      `largest allocation ${sum.biggest.bytes} bytes`,
  );
  console.log(`mutators: ${JSON.stringify(sum.byMutator)}`);
  for (const f of sum.failures.slice(0, 20))
    console.log(`FAIL #${f.index} ${f.fixture} (${f.what}): ${f.problem.split('\n').slice(0, 4).join(' | ')}`);
}
process.exit(sum.failures.length ? 1 : 0);
