/**
 * `perfpoke stats` against `perf report --stats` (perf 6.1) on every recorded
 * fixture and the real-kernel recordings: the whole text, line by line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli, runPerf } from './cli.js';
import { openSession } from '../src/session/session.js';
import { collectStats } from '../src/session/stats.js';
import { statsLines } from '../src/format/perf-stats.js';
import { Feature } from '../src/abi/feature.js';
import { cannotCompare } from './require-tool.js';

const dir = join(repoRoot, 'test', 'fixtures', 'recorded');
const fixtures = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.data'))
      .map((f) => join(dir, f))
  : [];
const real = join(repoRoot, 'test', 'fixtures', 'real-kernel');
for (const d of ['perf-alone', 'perf-kcore', 'perfpoke-kcore'])
  if (existsSync(join(real, d, 'data'))) fixtures.push(join(real, d, 'data'));
const havePerf = runPerf(['--version']) !== null;

async function ourLines(file: string, fast = true): Promise<string[]> {
  const s = await openSession(file);
  try {
    const st = await collectStats(s, undefined, { fast });
    return ['', ...statsLines(st, s.file.featureSection(Feature.AUXTRACE) !== undefined)];
  } finally {
    await s.close();
  }
}

for (const file of fixtures.sort()) {
  const name = file.slice(repoRoot.length + 1);
  test(`stats matches perf report --stats: ${name}`, async (t) => {
    if (!havePerf) return cannotCompare(t, 'perf is not installed');
    const perf = runPerf(['report', '--stats', '-i', file])!;
    // perf 6.1 stops early on some pipe-mode files with tracing data ("unexpected end of event stream")
    if (perf.status !== 0 || /unexpected end|failed to process/.test(perf.stderr))
      return t.skip(`perf 6.1 cannot read it: ${perf.stderr.trim().split('\n')[0]}`);
    const b = perf.stdout.replace(/\n$/, '').split('\n');
    const a = await ourLines(file);
    assert.deepEqual(a, b);
    // the header-walk fast path and the reader path agree
    assert.deepEqual(await ourLines(file, false), b);
  });
}

test('perfpoke stats CLI prints the same text and --json counts', (t) => {
  const f = fixtures.find((x) => x.endsWith('zstd.data'));
  if (!f) return cannotCompare(t, 'no zstd fixture');
  if (!havePerf) return cannotCompare(t, 'perf is not installed');
  const r = runCli(['stats', '-i', f]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, runPerf(['report', '--stats', '-i', f])!.stdout);
  const j = runCli(['stats', '-i', f, '--json']);
  const lines = j.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; name?: string; count?: number; total?: number });
  const counts = lines.filter((l) => l.type === 'record_count');
  const summary = lines[lines.length - 1]!;
  assert.equal(summary.type, 'stats_summary');
  assert.ok(counts.find((c) => c.name === 'COMPRESSED')!.count! >= 1, 'COMPRESSED records counted');
  assert.equal(
    counts.reduce((x, c) => x + c.count!, 0),
    summary.total,
  );
});
