import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { libiptEncodeMany, libiptHarness } from '../tools/libipt-harness/harness.js';
import { libipt23Tools, noLibipt23, runEach } from './libipt23.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { runPtxedView } from '../src/cli/ptxed-view.js';

/**
 * The ptxed view (`decode --raw-pt … --format=ptxed`: src/intelpt/ptxed's
 * libipt-semantics decoder and src/format/ptxed.ts) against Intel's ptxed 2.3
 * (insn decoder, `--no-inst`) on scenarios encoded by libipt's own encoder
 * (tools/libipt-harness) over one image: six `jz +0` (either TNT bit is
 * consistent) and a `jmp *%rax` back to the start (a TIP). Whole outputs must
 * equal ptxed's in every scenario, and so must the block decoder's
 * (`--block:show-blocks --stat`) (test/ptxed-events-libipt23.test.ts covers
 * every event kind with the project's own encoder).
 */

const BASE = 0x1000;
const IMAGE = new Uint8Array([0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0x74, 0x00, 0xff, 0xe0]);

/** One pass through the loop: six TNT bits and the TIP back to the start. */
const pass = fc.integer({ min: 0, max: 63 }).map((bits) => [`tnt.8 6 ${bits}`, `tip 3 ${BASE}`]);
// (TMA only belongs in PSB+: elsewhere libipt reports 'unexpected packet context')
const timing = fc.constantFrom('mtc 7', 'cyc 9', 'tsc 0x123456', 'cbr 20', 'pad');

type Kind = 'plain' | 'timing' | 'psb+' | 'overflow' | 'disable-enable';
const KINDS: Kind[] = ['plain', 'timing', 'psb+', 'overflow', 'disable-enable'];

function scenario(kind: Kind): fc.Arbitrary<string> {
  const passes = fc.array(pass, { minLength: 1, maxLength: 4 });
  const head = ['psb', 'mode.exec 1 0', 'psbend', `tip.pge 3 ${BASE}`];
  const tail = ['tnt.8 6 0', 'tip.pgd 0 0'];
  const body: fc.Arbitrary<string[]> = (() => {
    switch (kind) {
      case 'plain':
        return passes.map((p) => p.flat());
      case 'timing':
        return fc
          .tuple(passes, fc.array(timing, { minLength: 1, maxLength: 4 }))
          .map(([p, t]) => [...(p[0] ?? []), ...t, ...p.slice(1).flat()]);
      case 'psb+':
        // a PSB+ between two passes, with the FUP of the current IP
        return fc
          .tuple(passes, passes)
          .map(([a, b]) => [...a.flat(), 'psb', 'mode.exec 1 0', `fup 3 ${BASE}`, 'psbend', ...b.flat()]);
      case 'overflow':
        // an overflow, resumed at a FUP (tracing stayed enabled)
        return fc.tuple(passes, passes).map(([a, b]) => [...a.flat(), 'ovf', `fup 3 ${BASE}`, ...b.flat()]);
      case 'disable-enable':
        return fc
          .tuple(passes, passes)
          .map(([a, b]) => [...a.flat(), 'tnt.8 6 0', 'tip.pgd 0 0', `tip.pge 3 ${BASE}`, ...b.flat()]);
    }
  })();
  return body.map((b) => `${[...head, ...b, ...tail].join('\n')}\n`);
}

const RUNS = 20;

/** What `decode --raw-pt … --format=ptxed` prints for a stream. */
const ptxedView = (trace: Uint8Array): string =>
  runPtxedView(trace, [{ addr: BigInt(BASE), bytes: IMAGE }], ['--insn-decoder']).stdout;

const addresses = (out: string): string[] => out.split('\n').filter((l) => /^[0-9a-f]{16}$/.test(l));

test('decode --raw-pt --format=ptxed vs ptxed 2.3 (insn decoder): runs equal per scenario kind', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const dir = tempDir('ptxed23-');
  const image = join(dir, 'loop.bin');
  writeFileSync(image, IMAGE);
  const descriptions = KINDS.flatMap((k) => fc.sample(scenario(k), { numRuns: RUNS, seed: 0x1700 }));
  const streams = libiptEncodeMany(hv.ptEnc, descriptions, dir);
  const files = streams.map((b, k) => {
    const f = join(dir, `x${k}.pt`);
    writeFileSync(f, b);
    return f;
  });
  const theirs = runEach(
    tools.ptxed,
    files.map((f) => ['--insn-decoder', '--pt', f, '--raw', `${image}:${BASE}`, '--no-inst']),
  );
  // and the block decoder's view of the same streams: its blocks and statistics
  const BLOCKS = ['--block:show-blocks', '--stat'];
  const theirBlocks = runEach(
    tools.ptxed,
    files.map((f) => [...BLOCKS, '--pt', f, '--raw', `${image}:${BASE}`, '--no-inst']),
  );
  const counts: string[] = [];
  KINDS.forEach((kind, ki) => {
    let equal = 0;
    let sameInsns = 0;
    let sameBlocks = 0;
    for (let j = 0; j < RUNS; j++) {
      const k = ki * RUNS + j;
      const ours = ptxedView(streams[k]!);
      const want = theirs[k] ?? '';
      if (ours === want) equal++;
      if (addresses(ours).join() === addresses(want).join()) sameInsns++;
      const img = [{ addr: BigInt(BASE), bytes: IMAGE }];
      if (runPtxedView(streams[k]!, img, BLOCKS).stdout === theirBlocks[k]) sameBlocks++;
    }
    counts.push(
      `${kind}: whole output ${equal}/${RUNS}, instruction addresses ${sameInsns}/${RUNS}, ` +
        `blocks ${sameBlocks}/${RUNS}`,
    );
    assert.equal(sameInsns, RUNS, `${kind}: instruction addresses differ from ptxed's`);
    assert.equal(equal, RUNS, `${kind}: whole outputs differ from ptxed's`);
    assert.equal(sameBlocks, RUNS, `${kind}: block decoder outputs differ from ptxed's`);
  });
  for (const c of counts) t.diagnostic(c);
  // ptxed itself decoded them (the scenarios are consistent with the image)
  assert.ok(theirs.every((o) => o.startsWith('[enabled]\n') && !o.includes('error')));
  assert.ok(theirBlocks.every((o) => o.startsWith('[enabled]\n[block 1]\n')));
});
