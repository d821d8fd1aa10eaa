import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { libipt23Tools, noLibipt23, runEach } from './libipt23.js';
import { tempDir } from './temp-dir.js';
import { runCli } from './cli.js';
import { encodeScenario } from './pt-scenario.js';
import { RESYNC_KINDS, resyncScenario, type ResyncKind } from './ptxed-resync-scenarios.js';
import { BLOCK_BASE, BLOCK_IMAGE, BLOCK_KINDS, blockScenario, type BlockKind } from './ptxed-block-scenarios.js';
import { BASE, IMAGE, KINDS, scenario, type Kind } from './ptxed-scenarios.js';
import { runPtxedView } from '../src/cli/ptxed-view.js';
import { readPtFileRange } from '../src/cli/pt-file-range.js';

/**
 * ptxed's `--resync-on-error` (after an error, go on at the event that
 * failed rather than at the next PSB: pt_insn_resync / pt_blk_resync) and
 * `--offset` (the trace offset before each instruction, block and event) in
 * the ptxed view, against Intel's ptxed 2.3, whole outputs line for line:
 * - the error scenarios of test/ptxed-resync-scenarios.ts (an error with
 *   several PSBs after, right before the last PSB, with no later PSB, after
 *   an overflow, two errors) with both decoders, the block options, the
 *   event options and `--cpu` errata models;
 * - the block scenarios (calls, returns, loops; a packet lost) with each
 *   block option;
 * - the event scenarios of every kind (but CFE in a flow) with `--offset`;
 * - parts of a stream (`--pt FILE:FROM[-TO]`, perfpoke's `--raw-pt FILE:FROM[-TO]`):
 *   from a later PSB, from inside a packet, cut short, past the end.
 * The table of counts is printed (docs/intel-pt-flow.md quotes it).
 */

interface Case {
  kind: string;
  file: string;
  bytes: Uint8Array;
  steps: string[];
}

function writeCases<K extends string>(
  dir: string,
  kinds: K[],
  gen: (k: K) => fc.Arbitrary<string[]>,
  runs: number,
  seed: number,
): Case[] {
  return kinds.flatMap((kind) =>
    fc.sample(gen(kind), { numRuns: runs, seed }).map((steps, j) => {
      const file = join(dir, `${kind.replace(/[^a-z]+/g, '-')}-${j}.pt`);
      const bytes = encodeScenario(steps);
      writeFileSync(file, bytes);
      return { kind, file, bytes, steps };
    }),
  );
}

/** Runs every case with every option set through ptxed and the view: the per-kind table, failures, ptxed's outputs. */
function compare(
  ptxed: string,
  cases: Case[],
  sets: string[][],
  image: { file: string; base: number; bytes: Uint8Array },
): { table: string[]; failures: string[]; outputs: string[] } {
  const jobs = cases.flatMap((c) =>
    sets.map((o) => [...o, '--pt', c.file, '--raw', `${image.file}:${image.base}`, '--no-inst']),
  );
  const theirs = runEach(ptxed, jobs);
  const counts = new Map<string, [number, number]>();
  const failures: string[] = [];
  let n = 0;
  for (const c of cases)
    for (const o of sets) {
      const want = theirs[n++] ?? '';
      const ours = runPtxedView(c.bytes, [{ addr: BigInt(image.base), bytes: image.bytes }], o).stdout;
      const k = counts.get(c.kind) ?? [0, 0];
      counts.set(c.kind, [k[0] + (ours === want ? 1 : 0), k[1] + 1]);
      if (ours !== want && failures.length < 3)
        failures.push(`${c.kind} ${o.join(' ')}\n${c.steps.join('; ')}\n--- ptxed\n${want}--- ours\n${ours}`);
    }
  return { table: [...counts].map(([k, [e, t]]) => `${k}: ${e}/${t}`), failures, outputs: theirs };
}

const RESYNC_SETS: string[][] = [
  ['--insn-decoder'],
  ['--insn-decoder', '--resync-on-error'],
  ['--resync-on-error'],
  ['--insn-decoder', '--resync-on-error', '--offset'],
  ['--resync-on-error', '--offset', '--block:show-blocks', '--stat'],
  ['--offset', '--block:show-blocks', '--block:end-on-jump'],
  ['--resync-on-error', '--block:show-blocks', '--block:end-on-call', '--event:ip', '--event:time'],
  ['--insn-decoder', '--resync-on-error', '--cpu', '6/78', '--event:ip'],
  ['--resync-on-error', '--cpu', '6/92', '--stat:blocks'],
  ['--insn-decoder', '--resync-on-error', '--cpu', '6/61', '--quiet', '--stat'],
];

test('--resync-on-error and --offset vs ptxed 2.3: errors with PSBs after, before the last, none, overflows', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-resync-');
  const file = join(dir, 'loop.bin');
  writeFileSync(file, IMAGE);
  const cases = writeCases(dir, Object.keys(RESYNC_KINDS) as ResyncKind[], resyncScenario, 8, 0x1721);
  const r = compare(tools.ptxed, cases, RESYNC_SETS, { file, base: BASE, bytes: IMAGE });
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
  // the corpus shows what the options change: a resync without a PSB, a failed resync, the offset column
  const all = r.outputs.join('');
  assert.match(all, /^\[[0-9a-f]+, [0-9a-f]+: resync error: /m);
  assert.match(all, /^[0-9a-f]{16} {2}[0-9a-f]{16}$/m);
  const differ = r.outputs.filter((o, i) => i % RESYNC_SETS.length === 0 && o !== r.outputs[i + 1]);
  assert.ok(differ.length > cases.length / 4, `--resync-on-error changed ${differ.length} of ${cases.length} outputs`);
});

test('--resync-on-error and --offset vs ptxed 2.3 on calls, returns and loops, with every block option', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-resync-blocks-');
  const file = join(dir, 'code.bin');
  writeFileSync(file, BLOCK_IMAGE);
  const cases = writeCases(dir, Object.keys(BLOCK_KINDS) as BlockKind[], blockScenario, 4, 0x1722);
  const sets = [
    ['--resync-on-error', '--offset', '--block:show-blocks', '--stat'],
    ['--resync-on-error', '--block:show-blocks', '--block:end-on-call', '--event:ip'],
    ['--resync-on-error', '--offset', '--block:show-blocks', '--block:end-on-jump', '--stat:blocks'],
    ['--resync-on-error', '--block:show-blocks', '--block:end-on-call', '--block:end-on-jump', '--stat'],
    ['--insn-decoder', '--resync-on-error', '--offset', '--stat'],
  ];
  const r = compare(tools.ptxed, cases, sets, { file, base: BLOCK_BASE, bytes: BLOCK_IMAGE });
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
});

test('--offset vs ptxed 2.3 on the event scenarios of every kind, both decoders', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-offset-');
  const file = join(dir, 'loop.bin');
  writeFileSync(file, IMAGE);
  // (an error while a CFE in a flow is pending is reported at a later offset by libipt: a known difference)
  const kinds = (Object.keys(KINDS) as Kind[]).filter((k) => k !== 'event tracing, in flow');
  const cases = writeCases(dir, kinds, scenario, 4, 0x1723);
  const sets = [
    ['--insn-decoder', '--offset', '--event:ip'],
    ['--offset', '--resync-on-error', '--block:show-blocks', '--event:time'],
  ];
  const r = compare(tools.ptxed, cases, sets, { file, base: BASE, bytes: IMAGE });
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
});

/** Offsets of the PSBs in a stream (the 16-byte pattern 02 82 × 8). */
function psbOffsets(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 16 <= b.length; i++) {
    let psb = true;
    for (let j = 0; j < 16 && psb; j++) psb = b[i + j] === (j % 2 ? 0x82 : 0x02);
    if (psb) out.push(i);
  }
  return out;
}

test('--raw-pt FILE:FROM[-TO] vs ptxed --pt FILE:FROM[-TO]: at a PSB, in a packet, cut short, past the end', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-range-');
  const file = join(dir, 'loop.bin');
  writeFileSync(file, IMAGE);
  const cases = writeCases(dir, ['error, PSBs after', 'two errors'] as ResyncKind[], resyncScenario, 6, 0x1724);
  const sets = [
    ['--insn-decoder', '--offset'],
    ['--resync-on-error', '--offset', '--block:show-blocks'],
    ['--insn-decoder', '--resync-on-error', '--event:ip'],
  ];
  const jobs: { c: Case; range: string; opts: string[] }[] = [];
  for (const c of cases) {
    const psbs = psbOffsets(c.bytes);
    const at = psbs[1] ?? 0;
    // at a later PSB, inside the PSB and inside the TIP.PGE after the first one, that PSB cut short
    for (const range of [`${at}`, `0x${(at + 1).toString(16)}`, '0x16', `${at}-${c.bytes.length - 3}`])
      for (const opts of sets) jobs.push({ c, range, opts });
  }
  const theirs = runEach(
    tools.ptxed,
    jobs.map((j) => [...j.opts, '--pt', `${j.c.file}:${j.range}`, '--raw', `${file}:${BASE}`, '--no-inst']),
  );
  let equal = 0;
  const failures: string[] = [];
  jobs.forEach((j, n) => {
    const ours = runPtxedView(
      readPtFileRange(`${j.c.file}:${j.range}`),
      [{ addr: BigInt(BASE), bytes: IMAGE }],
      j.opts,
    );
    if (ours.stdout === theirs[n]) equal++;
    else if (failures.length < 3)
      failures.push(
        `${j.range} ${j.opts.join(' ')}\n${j.c.steps.join('; ')}\n--- ptxed\n${theirs[n]}--- ours\n${ours.stdout}`,
      );
  });
  t.diagnostic(`ranges: ${equal}/${jobs.length}`);
  assert.deepEqual(failures, [], failures.join('\n'));
  // past the end: ptxed refuses the offset (nothing decoded), and so does --raw-pt, by name
  const c = cases[0];
  assert.ok(c);
  for (const range of [`${c.bytes.length}`, `0-${c.bytes.length + 1}`]) {
    const args = ['--pt', `${c.file}:${range}`, '--raw', `${file}:${BASE}`];
    const res: { status: number | null; stdout: string; stderr: string } = spawnSync(tools.ptxed, args, {
      encoding: 'utf8',
    });
    assert.notEqual(res.status, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /bad (offset|range)/);
    assert.throws(() => readPtFileRange(`${c.file}:${range}`), /--raw-pt .*: bad (offset|range)/);
  }
});

test('decode --raw-pt FILE[:FROM] --resync-on-error --offset: as ptxed prints; past the end, exit 2', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-resync-cli-');
  const image = join(dir, 'loop.bin');
  writeFileSync(image, IMAGE);
  const [c] = writeCases(dir, ['error, PSBs after'] as ResyncKind[], resyncScenario, 1, 0x1725);
  assert.ok(c);
  const at = psbOffsets(c.bytes)[1] ?? 0;
  for (const range of ['', `:${at + 3}`]) {
    const opts = ['--insn-decoder', '--resync-on-error', '--offset'];
    const [want = ''] = runEach(tools.ptxed, [
      [...opts, '--pt', c.file + range, '--raw', `${image}:${BASE}`, '--no-inst'],
    ]);
    const ours = runCli(['decode', '--raw-pt', c.file + range, '--image', `${image}:${BASE}`, ...opts]);
    assert.equal(ours.status, 0, ours.stderr);
    assert.equal(ours.stdout, want, `${range}: ${c.steps.join('; ')}`);
  }
  const bad = runCli(['decode', '--raw-pt', `${c.file}:${c.bytes.length}`, '--image', `${image}:${BASE}`]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--raw-pt .*: bad offset/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
});
