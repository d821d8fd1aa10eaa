/**
 * The code image read from a kcore_dir recording equals the ground truth of
 * the fixture's site histories at every poke time and between them, both
 * through the library (loadMachine) and through `perfpoke image`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runCli, repoRoot } from './cli.js';
import { loadMachine } from '../src/machine/from-perf-data.js';
import { basicSites, trampoline, TRAMP, kernelText, KTEXT } from './fixtures/kcore/scenario.js';
import { formatNsTime, formatPerfTime } from '../src/machine/time-format.js';
import { listTrampolines } from '../src/machine/trampolines.js';
import { cannotCompare } from './require-tool.js';

const basic = join(repoRoot, 'test', 'fixtures', 'kcore', 'basic');

/** State of a site at time t from its history: pokes with time ≤ t applied, same-time pokes all applied. */
function truth(s: { states: number[][]; times: bigint[] }, t: bigint): number[] {
  let k = 0;
  while (k < s.times.length && s.times[k]! <= t) k++;
  return s.states[k]!;
}

test('image at every poke time, just before it, and at the end equals the site histories', async () => {
  const m = await loadMachine(basic);
  for (const s of basicSites()) {
    const ts = [...new Set(s.times.flatMap((t) => [t - 1n, t, t + 1n]))];
    for (const t of ts) {
      assert.deepEqual([...m.image.read(s.addr, s.states[0]!.length, t)], truth(s, t), `${s.name} at ${t}`);
    }
    assert.deepEqual([...m.image.read(s.addr, s.states[0]!.length)], s.states[s.states.length - 1]);
  }
  const tr = trampoline();
  assert.equal(m.image.read(TRAMP, 4, tr.created - 1n).length, 0);
  assert.deepEqual([...m.image.read(TRAMP, tr.code.length, tr.created)], tr.code);
  assert.equal(m.image.read(TRAMP, 4, tr.removed).length, 0);
  assert.deepEqual(listTrampolines(m.image, m.ksymbols), [
    { addr: TRAMP, len: tr.code.length, created: tr.created, removed: tr.removed, name: tr.name, ksymType: 2 },
  ]);
  // untouched kernel text comes straight from kcore
  const { ktext } = kernelText(basicSites());
  assert.deepEqual([...m.image.read(KTEXT + 0x2000n, 64)], [...ktext.subarray(0x2000, 0x2040)]);
});

test('perfpoke image: bytes and instructions at a time, in perf time or ns', () => {
  const jl = basicSites().find((s) => s.name === 'jump label')!;
  for (const [t, opt, arg] of [
    [jl.times[0]! - 1n, '--time', formatNsTime(jl.times[0]! - 1n)],
    [jl.times[0]!, '--time-ns', jl.times[0]!.toString()],
    [jl.times[0]!, '--time', formatPerfTime(jl.times[0]!)],
  ] as const) {
    const r = runCli(['image', '-i', basic, '--addr', 'do_sys_open+0x10', '--len', '5', opt, arg, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const objs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; addr: string; bytes: string; sym: string });
    const j = objs[objs.length - 1]!;
    assert.equal(j.type, 'image_summary');
    assert.equal(j.addr, `0x${jl.addr.toString(16)}`);
    assert.deepEqual([...Buffer.from(j.bytes, 'hex')], truth(jl, t));
    assert.equal(objs[0]!.type, 'image_insn');
    assert.equal(objs[0]!.sym, 'do_sys_open+0x10');
  }
  const txt = runCli(['image', '-i', basic, '--addr', '0xffffffffc0200000', '--len', '16', '--time', '1000.000012']);
  assert.equal(txt.status, 0, txt.stderr);
  assert.match(
    txt.stdout,
    /ffffffffc0200004 <optimized_kprobe_insn_page\+0x4> +e9 04 05 e0 c0 +jmp 0xffffffff8100050d <kprobe_target\+0xd>/,
  );
  assert.match(txt.stdout, /\(no code: 4 bytes\)/);
  const bad = runCli(['image', '-i', basic, '--addr', 'no_such_symbol']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /cannot resolve address 'no_such_symbol'/);
});

test('the ELF core writer output is a valid ELF to binutils readelf', (t) => {
  const r = spawnSync('readelf', ['-l', '-W', join(basic, 'kcore_dir', 'kcore')], { encoding: 'utf8' });
  if (r.error) return cannotCompare(t, 'readelf not installed');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Elf file type is CORE/);
  assert.match(r.stdout, /LOAD +0x001000 0xffffffff81000000 0x0000000000000000 0x004000 0x004000 RWE/);
  assert.match(r.stdout, /LOAD +0x005000 0xffffffffc0000000 0x0000000000000000 0x001000 0x001000 RWE/);
});

test('the TEXT_POKE fast path reads the same pokes as the full record decoder', async () => {
  const { existsSync } = await import('node:fs');
  const inputs = [
    basic,
    join(repoRoot, 'test', 'fixtures', 'real-kernel', 'perf-alone'),
    join(repoRoot, 'test', 'fixtures', 'real-kernel', 'perfpoke-kcore'),
  ].filter((p) => existsSync(p));
  for (const input of inputs) {
    const fast = await loadMachine(input);
    const slow = await loadMachine(input, { noFastPath: true });
    assert.ok(fast.pokes.length > 0, input);
    const norm = (m: typeof fast) =>
      m.pokes.map((p) => ({ ...p, oldBytes: [...p.oldBytes], newBytes: [...p.newBytes] }));
    assert.deepEqual(norm(fast), norm(slow), input);
  }
});
