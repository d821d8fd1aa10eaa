/**
 * The fuzzer through the CLI: mutants of the committed fixtures given to dump,
 * script, stats, check and pokes as spawned processes. Each must exit 0, 1, 2
 * or 4 (never 3, an internal error, nor a signal), print no stack trace, and a
 * bad-input exit (2) says so in one `perfpoke: …` line. FUZZ_CLI_MUTANTS sets
 * the count (the long run: npm run fuzz:cli, 100 mutants).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';
import { fuzzFixtures } from './fuzz-driver.js';
import { mutant } from './fuzz-mutate.js';
import { tempDir } from './temp-dir.js';

const count = Number(process.env.FUZZ_CLI_MUTANTS ?? 8);
const seed = Number(process.env.FUZZ_SEED ?? 20260101);
const COMMANDS = ['dump', 'script', 'stats', 'check', 'pokes'];
const mainTs = join(repoRoot, 'src', 'cli', 'main.ts');

function run(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', mainTs, ...args], { cwd: repoRoot });
    let stderr = '';
    p.stdout.resume();
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr, ms: performance.now() - t0 });
    });
  });
}

test(`fuzz through the CLI: ${count} mutants × ${COMMANDS.join('/')} (seed ${seed})`, async (t) => {
  const dir = tempDir('perfpoke-fuzz-cli-');
  const fixtures = fuzzFixtures();
  const jobs: { args: string[]; label: string }[] = [];
  for (let i = 0; i < count; i++) {
    // stride through the fixtures so a short run still meets most of them
    const k = (i * 7) % fixtures.length;
    const m = mutant(new Uint8Array(readFileSync(fixtures[k]!)), seed, i);
    const p = join(dir, `m${i}.data`);
    writeFileSync(p, m.bytes);
    for (const c of COMMANDS)
      jobs.push({ args: [c, '-i', p], label: `${c} on mutant ${i} of ${fixtures[k]} [${m.what}]` });
  }
  const problems: string[] = [];
  const codes: Record<string, number> = {};
  let slowest = 0;
  // two at a time: the machine has two cores
  const work = async (): Promise<void> => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      const r = await run(job.args);
      slowest = Math.max(slowest, r.ms);
      codes[String(r.code ?? r.signal)] = (codes[String(r.code ?? r.signal)] ?? 0) + 1;
      const lines = r.stderr.trim().split('\n');
      if (r.code === null || ![0, 1, 2, 4].includes(r.code)) problems.push(`${job.label}: exit ${r.code ?? r.signal}`);
      if (/^\s+at .+:\d+:\d+\)?$/m.test(r.stderr)) problems.push(`${job.label}: stack trace on stderr`);
      if (r.code === 2 && (lines.length !== 1 || !lines[0]!.startsWith('perfpoke: ')))
        problems.push(`${job.label}: exit 2 without one 'perfpoke: …' line: ${r.stderr.slice(0, 300)}`);
    }
  };
  await Promise.all([work(), work()]);
  t.diagnostic(`exit codes ${JSON.stringify(codes)}; slowest run ${slowest.toFixed(0)} ms`);
  assert.deepEqual(problems, []);
});
