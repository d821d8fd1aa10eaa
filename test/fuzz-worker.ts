/**
 * Fuzz worker thread (started by test/fuzz-driver.ts): builds mutant `i` of a
 * fixture, writes it to its scratch file and runs every library reader on it
 * in-process. Each reader must end in data or in one FormatError (one line,
 * with the file offset); anything else is reported as a crash. Allocations are
 * watched: the typed-array and Buffer constructors are wrapped before the
 * readers load, and the largest single request is reported with each mutant.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readFileSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { FIXED_BUFFERS, FUZZ_WINDOW, mutant } from './fuzz-mutate.js';
import { ZSTD_MAX_WINDOW } from '../src/perfdata/zstd-window.js';

// ---- allocation watch (before any reader module is imported)
let biggest = 0;
/** Allocations above this (the mutant's size, or the fuzzer's reader window) are looked at closely. */
let limit = Infinity;
let biggestStack = '';
// FUZZ_TRACE=1 prints the stack of each allocation above the limit (the driver shows worker stderr then)
const trace = process.env.FUZZ_TRACE === '1';
const note = (n: unknown): void => {
  if (typeof n !== 'number' || n <= biggest || FIXED_BUFFERS.has(n)) return;
  if (n > limit) {
    const stack = new Error().stack ?? '';
    // fzstd's window, which the reader bounds (src/perfdata/zstd-window.ts) before fzstd sees the frame
    if (stack.includes('/fzstd/') && n <= ZSTD_MAX_WINDOW + 12) return;
    biggestStack = stack;
    if (trace) console.error(`allocation of ${n} bytes`, stack);
  }
  biggest = n;
};
const wrap = <T extends object>(C: T, unit: number): T =>
  new Proxy(C, {
    construct(target, args, newTarget) {
      if (typeof args[0] === 'number') note(args[0] * unit);
      return Reflect.construct(target as new (...a: unknown[]) => object, args, newTarget) as object;
    },
  });
const g = globalThis as unknown as Record<string, unknown>;
g.ArrayBuffer = wrap(ArrayBuffer, 1);
g.Uint8Array = wrap(Uint8Array, 1);
g.Uint16Array = wrap(Uint16Array, 2);
g.Uint32Array = wrap(Uint32Array, 4);
g.Int32Array = wrap(Int32Array, 4);
g.BigUint64Array = wrap(BigUint64Array, 8);
g.Float64Array = wrap(Float64Array, 8);
for (const k of ['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const) {
  const real = Buffer[k].bind(Buffer) as (n: number, ...rest: unknown[]) => Buffer;
  (Buffer as unknown as Record<string, unknown>)[k] = (n: number, ...rest: unknown[]) => {
    note(n);
    return real(n, ...rest);
  };
}

const { openPerfData } = await import('../src/perfdata/open.js');
const { readFileFeatures } = await import('../src/perfdata/features/index.js');
const { printFeature } = await import('../src/format/header-features.js');
const { openSession } = await import('../src/session/session.js');
const { collectStats } = await import('../src/session/stats.js');
const { loadMachine } = await import('../src/machine/from-perf-data.js');
const { checkImage } = await import('../src/machine/check.js');
const { isFormatError } = await import('../src/io/errors.js');

export interface WorkerInput {
  fixtures: string[];
  seed: number;
  scratch: string;
}

export interface MutantResult {
  index: number;
  fixture: string;
  mutator: string;
  what: string;
  size: number;
  ms: number;
  /** Largest single allocation request while reading, bytes. */
  biggest: number;
  /** Readers that ended in a FormatError / that read to the end. */
  formatErrors: number;
  ok: number;
  /** Anything else: "stage: message" (stack included). */
  crashes: string[];
}

const { fixtures, seed, scratch } = workerData as WorkerInput;
const sources = fixtures.map((f) => new Uint8Array(readFileSync(f)));
const file = `${scratch}/mutant.data`;

const STAGES: [string, (p: string) => Promise<unknown>][] = [
  [
    'records',
    async (p) => {
      const f = await openPerfData(p, { windowSize: FUZZ_WINDOW });
      try {
        for await (const r of f.records()) {
          r.decode();
          r.timestamp();
        }
      } finally {
        await f.close();
      }
    },
  ],
  [
    'features',
    async (p) => {
      const ff = await readFileFeatures(p);
      const all = ff.features.map((x) => x.data);
      for (const x of ff.features) printFeature(x.data, { all, full: true, le: ff.header.le });
    },
  ],
  [
    'session',
    async (p) => {
      const s = await openSession(p, { windowSize: FUZZ_WINDOW });
      try {
        await collectStats(s);
      } finally {
        await s.close();
      }
      const o = await openSession(p, { windowSize: FUZZ_WINDOW });
      try {
        await o.loadNames();
        for await (const e of o.events()) o.eventName(e);
      } finally {
        await o.close();
      }
    },
  ],
  ['machine', async (p) => checkImage((await loadMachine(p)).image)],
];

function formatErrorProblem(e: Error): string | undefined {
  if (e.message.includes('\n')) return 'FormatError message spans lines';
  if (!/at offset 0x[0-9a-f]+/.test(e.message)) return 'FormatError message names no offset';
  const off = (e as unknown as { offset: unknown }).offset;
  if (typeof off !== 'number' || !Number.isSafeInteger(off) || off < 0) return `bad offset ${String(off)}`;
  return undefined;
}

parentPort!.on('message', async (index: number) => {
  const k = index % sources.length;
  const m = mutant(sources[k]!, seed, index);
  writeFileSync(file, m.bytes);
  const res: MutantResult = {
    index,
    fixture: fixtures[k]!,
    mutator: m.mutator,
    what: m.what,
    size: m.bytes.length,
    ms: 0,
    biggest: 0,
    formatErrors: 0,
    ok: 0,
    crashes: [],
  };
  biggest = 0;
  biggestStack = '';
  limit = Math.max(m.bytes.length, FUZZ_WINDOW);
  const t0 = performance.now();
  for (const [stage, run] of STAGES) {
    try {
      await run(file);
      res.ok++;
    } catch (e) {
      if (isFormatError(e)) {
        const bad = formatErrorProblem(e);
        if (bad) res.crashes.push(`${stage}: ${bad}: ${e.message}`);
        else res.formatErrors++;
      } else res.crashes.push(`${stage}: ${(e as Error)?.stack ?? String(e)}`);
    }
  }
  res.ms = performance.now() - t0;
  res.biggest = biggest;
  if (biggest > limit)
    res.crashes.push(`allocated ${biggest} bytes for a ${m.bytes.length}-byte file: ${biggestStack}`);
  limit = Infinity;
  parentPort!.postMessage(res);
});
parentPort!.postMessage('ready');
