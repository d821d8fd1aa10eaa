/**
 * `npm run bench`: runs every bench/<topic>.ts module's `run()` (or only the
 * topics named on the command line: `npm run bench -- reader packets`). Each
 * prints its figures as ratios against perf / libipt measured in the same run;
 * the goals the topics measured (bench/lib/goals.ts) are printed last, each
 * beside its target.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { goalsTable } from './lib/goals.js';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const topics = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((t) => wanted.length === 0 || wanted.includes(t))
  .sort();
let failed = 0;
for (const t of topics) {
  console.log(`\n=== bench: ${t} ===`);
  const mod = (await import(pathToFileURL(join(here, `${t}.ts`)).href)) as { run?: () => Promise<void> };
  if (typeof mod.run !== 'function') continue;
  try {
    await mod.run();
  } catch (e) {
    failed++;
    console.error(`bench ${t} failed:`, e);
  }
}
const table = goalsTable();
if (table) console.log(`\n=== goals (ratios against perf measured in this run; medians of paired runs) ===\n${table}`);
process.exitCode = failed ? 1 : 0;
