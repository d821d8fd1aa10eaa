/**
 * Runs the in-process mutation fuzzer: mutants of the committed fixtures go to
 * a worker thread (test/fuzz-worker.ts) one at a time; the driver bounds each
 * mutant's time (a worker that does not answer is terminated: a hang) and
 * memory (resourceLimits: an out-of-memory worker is a crash), checks the
 * largest allocation against the file's size, and restarts the worker after
 * a hang or a crash so that one bad mutant does not end the run.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { repoRoot } from './cli.js';
import type { MutantResult, WorkerInput } from './fuzz-worker.js';

export interface FuzzFailure {
  index: number;
  fixture: string;
  what: string;
  problem: string;
}

export interface FuzzSummary {
  mutants: number;
  /** Reader runs (4 per mutant) that ended in data / in a FormatError. */
  readsOk: number;
  formatErrors: number;
  failures: FuzzFailure[];
  slowest: { ms: number; index: number; fixture: string };
  /** Largest allocation not in FIXED_BUFFERS, and the size of the mutant that made it. */
  biggest: { bytes: number; size: number; index: number };
  byMutator: Record<string, number>;
  seconds: number;
}

/** Every committed perf.data fixture (files and `--kcore` directories' data), sorted. */
export function fuzzFixtures(): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.data') || n === 'data') out.push(p);
    }
  };
  walk(join(repoRoot, 'test', 'fixtures'));
  return out;
}

export async function runFuzz(opts: {
  count: number;
  seed: number;
  scratch: string;
  fixtures?: string[];
  /** A mutant taking longer than this is a hang. */
  timeoutMs?: number;
  onProgress?: (done: number) => void;
}): Promise<FuzzSummary> {
  const fixtures = opts.fixtures ?? fuzzFixtures();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const t0 = performance.now();
  const sum: FuzzSummary = {
    mutants: 0,
    readsOk: 0,
    formatErrors: 0,
    failures: [],
    slowest: { ms: 0, index: -1, fixture: '' },
    biggest: { bytes: 0, size: 0, index: -1 },
    byMutator: {},
    seconds: 0,
  };
  const input: WorkerInput = { fixtures, seed: opts.seed, scratch: opts.scratch };
  let next = 0;
  while (next < opts.count) {
    // a worker thread does not inherit tsx's loader: register it there before loading the .ts worker
    const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register();
      return import(${JSON.stringify(new URL('./fuzz-worker.ts', import.meta.url).href)}); })`;
    const w = new Worker(boot, {
      eval: true,
      workerData: input,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
      stderr: process.env.FUZZ_TRACE !== '1',
    });
    w.stderr?.resume();
    // one worker serves mutants until the end, a hang or a crash
    next = await new Promise<number>((resolve) => {
      let current = -1;
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const fail = (problem: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (current < 0) throw new Error(`fuzz worker did not start: ${problem}`);
        const fixture = fixtures[current % fixtures.length] ?? '';
        sum.failures.push({ index: current, fixture, what: 'see mutant(seed, index)', problem });
        sum.mutants++;
        void w.terminate();
        resolve(current + 1);
      };
      const send = (i: number): void => {
        if (i >= opts.count) {
          settled = true;
          clearTimeout(timer);
          void w.terminate();
          resolve(i);
          return;
        }
        current = i;
        timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms (hang)`), timeoutMs);
        w.postMessage(i);
      };
      w.on('message', (m: MutantResult | 'ready') => {
        if (m === 'ready') return send(next);
        clearTimeout(timer);
        record(sum, m);
        opts.onProgress?.(sum.mutants);
        send(m.index + 1);
      });
      w.on('error', (e) => fail(`worker died: ${e.message}`));
      w.on('exit', (code) => fail(`worker exited (${code}) while reading the mutant`));
    });
  }
  sum.seconds = (performance.now() - t0) / 1000;
  return sum;
}

function record(sum: FuzzSummary, m: MutantResult): void {
  sum.mutants++;
  sum.readsOk += m.ok;
  sum.formatErrors += m.formatErrors;
  sum.byMutator[m.mutator] = (sum.byMutator[m.mutator] ?? 0) + 1;
  if (m.ms > sum.slowest.ms) sum.slowest = { ms: m.ms, index: m.index, fixture: m.fixture };
  if (m.biggest > sum.biggest.bytes) sum.biggest = { bytes: m.biggest, size: m.size, index: m.index };
  for (const problem of m.crashes) sum.failures.push({ index: m.index, fixture: m.fixture, what: m.what, problem });
}
