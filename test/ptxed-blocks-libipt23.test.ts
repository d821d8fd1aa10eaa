import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { libipt23Tools, noLibipt23, runEach } from './libipt23.js';
import { tempDir } from './temp-dir.js';
import { encodeScenario } from './pt-scenario.js';
import {
  BLOCK_BASE,
  BLOCK_IMAGE,
  BLOCK_KINDS,
  blockScenario,
  type BlockKind,
  MODE_IMAGE,
  modeScenario,
} from './ptxed-block-scenarios.js';
import { BASE, IMAGE, KINDS, scenario, type Kind } from './ptxed-scenarios.js';
import { runPtxedView } from '../src/cli/ptxed-view.js';

/**
 * The block decoder of the ptxed view (`decode --raw-pt … --format=ptxed
 * --block-show-blocks`, src/intelpt/ptxed/block-walk.ts and
 * block-cache-model.ts) against Intel's ptxed 2.3: `--block:show-blocks`,
 * `--block:end-on-call`, `--block:end-on-jump`, `--stat`, `--stat:blocks`,
 * whole outputs line for line, on
 * - an image with a call and its return, a forward and a backward direct jump
 *   (test/ptxed-block-scenarios.ts), where libipt's block cache decides where
 *   blocks end (a call ends a block only the first time it is decoded…);
 * - the event scenarios of every kind (test/ptxed-scenarios.ts).
 * The table of counts is printed (docs/intel-pt-flow.md quotes it).
 */

const OPTION_SETS: string[][] = [
  ['--block:show-blocks', '--stat'],
  ['--block:show-blocks', '--block:end-on-call', '--event:ip'],
  ['--block:show-blocks', '--block:end-on-jump', '--stat:blocks'],
  ['--block:show-blocks', '--block:end-on-call', '--block:end-on-jump', '--stat'],
  ['--quiet', '--stat', '--block:end-on-call'],
  ['--insn-decoder', '--stat'],
];

interface Case {
  kind: string;
  bytes: Uint8Array;
  steps: string[];
  file: string;
}

/** Runs every case with every option set through ptxed and the view; returns the per-kind table and failures. */
function compare(
  ptxed: string,
  cases: Case[],
  optionSets: string[][],
  images: { file: string; base: number; bytes: Uint8Array }[],
): { table: string[]; failures: string[]; outputs: string[] } {
  const raws = images.flatMap((i) => ['--raw', `${i.file}:${i.base}`]);
  const segs = images.map((i) => ({ addr: BigInt(i.base), bytes: i.bytes }));
  const jobs = cases.flatMap((c) => optionSets.map((opts) => [...opts, '--pt', c.file, ...raws, '--no-inst']));
  const theirs = runEach(ptxed, jobs);
  const counts = new Map<string, [number, number]>();
  const failures: string[] = [];
  let n = 0;
  for (const c of cases)
    for (const opts of optionSets) {
      const want = theirs[n++] ?? '';
      const ours = runPtxedView(c.bytes, segs, opts).stdout;
      const k = counts.get(c.kind) ?? [0, 0];
      counts.set(c.kind, [k[0] + (ours === want ? 1 : 0), k[1] + 1]);
      if (ours !== want && failures.length < 3)
        failures.push(`${c.kind} ${opts.join(' ')}\n${c.steps.join('; ')}\n--- ptxed\n${want}--- ours\n${ours}`);
    }
  const table = [...counts].map(([kind, [eq, total]]) => `${kind}: ${eq}/${total}`);
  return { table, failures, outputs: theirs };
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

test('block decoder vs ptxed 2.3 over calls, returns and loops: blocks where the block cache ends them', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-blocks-');
  const image = join(dir, 'code.bin');
  writeFileSync(image, BLOCK_IMAGE);
  const cases = writeCases(dir, Object.keys(BLOCK_KINDS) as BlockKind[], blockScenario, 6, 0x1718);
  const r = compare(tools.ptxed, cases, OPTION_SETS, [{ file: image, base: BLOCK_BASE, bytes: BLOCK_IMAGE }]);
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
  // the corpus shows the block cache at work: the call and the backward jump end a block the first time only
  const shown = r.outputs.filter((_o, i) => i % OPTION_SETS.length === 0).join('');
  for (const re of [/^0+1002\n\[block/m, /^0+1002\n0+1020$/m, /^0+1014\n\[block/m, /^0+1014\n0+1010$/m])
    assert.match(shown, re);
  // a TIP.PGD at an IP the walk reaches: disabled before the instruction there, resumed at it, empty blocks
  for (const re of [/^[0-9a-f]{16}\n\[disabled\]\n\[resumed\]$/m, /^\[block [0-9a-f]+\]\n\[disabled\]$/m])
    assert.match(shown, re);
  // without statistics the blocks are not numbered
  assert.match(r.outputs[1] ?? '', /^\[block\]$/m);
  assert.ok(r.outputs.some((o) => /error/.test(o)) && r.outputs.some((o) => /\[end of trace\]/.test(o)));
});

test('block decoder vs ptxed 2.3 on the event scenarios of every kind', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-blocks-events-');
  const image = join(dir, 'loop.bin');
  writeFileSync(image, IMAGE);
  const cases = writeCases(dir, Object.keys(KINDS) as Kind[], scenario, 4, 0x1719);
  const sets = [OPTION_SETS[0] ?? [], ['--block:show-blocks', '--block:end-on-jump', '--event:time', '--stat:blocks']];
  const r = compare(tools.ptxed, cases, sets, [{ file: image, base: BASE, bytes: IMAGE }]);
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
});

test('block decoder vs ptxed 2.3 with the code in two images: a block never crosses from one to the other', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-blocks-sections-');
  // the loop and the function in the second image: the forward jmp at 100c and the call leave the first
  const images = [BLOCK_IMAGE.subarray(0, 0x10), BLOCK_IMAGE.subarray(0x10)].map((bytes, i) => {
    const file = join(dir, `part${i}.bin`);
    writeFileSync(file, bytes);
    return { file, base: BLOCK_BASE + 0x10 * i, bytes };
  });
  const cases = writeCases(dir, Object.keys(BLOCK_KINDS) as BlockKind[], blockScenario, 4, 0x171a);
  const sets = [OPTION_SETS[0] ?? [], OPTION_SETS[1] ?? []];
  const r = compare(tools.ptxed, cases, sets, images);
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
  // the first time, a block ends where the code leaves the first image
  assert.match(r.outputs.join(''), /^0+100c\n\[block/m);
});

test('both decoders vs ptxed 2.3 on an exec mode change inside the block cache (libipt fails: internal error)', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptxed23-blocks-mode-');
  const image = join(dir, 'modes.bin');
  writeFileSync(image, MODE_IMAGE);
  const cases = writeCases(dir, ['exec mode in the cache'], () => modeScenario, 24, 0x171b);
  const sets = [
    ['--block:show-blocks', '--stat'],
    ['--insn-decoder', '--stat'],
    ['--insn-decoder', '--offset'],
    ['--block:show-blocks', '--offset', '--resync-on-error'],
    ['--insn-decoder', '--resync-on-error', '--event:ip'],
  ];
  const r = compare(tools.ptxed, cases, sets, [{ file: image, base: BLOCK_BASE, bytes: MODE_IMAGE }]);
  for (const l of r.table) t.diagnostic(l);
  assert.deepEqual(r.failures, [], r.failures.join('\n'));
  // the corpus has the failure and streams without it
  assert.ok(r.outputs.some((o) => /: error: internal error\]$/m.test(o)));
  assert.ok(r.outputs.some((o) => !/error/.test(o)));
});
