/**
 * The simulator's output as perf 6.1 sees it: reproducible from the seed,
 * a --kcore directory perf uses (symbols from kallsyms, pokes as TEXT_POKE
 * records at the flip times), and a ground truth whose size perf confirms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { simulate, readTruth } from '../src/sim/simulate.js';
import { NOP2, NOP5 } from '../src/sim/assembler.js';
import { generateProgram } from '../src/sim/codegen.js';
import { runCli, runPerf } from './cli.js';
import iced from 'iced-x86';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const perfOk = existsSync('/usr/bin/perf') && runPerf(['--version']) !== null;
const dir = tempDir('perfpoke-sim-');
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('same seed, same bytes; another seed, another recording', () => {
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const c = join(dir, 'c');
  simulate({ out: a, seed: 3, size: 20_000 });
  simulate({ out: b, seed: 3, size: 20_000 });
  simulate({ out: c, seed: 4, size: 20_000 });
  for (const f of ['data', 'truth.bin', 'kcore_dir/kcore', 'kcore_dir/kallsyms'])
    assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f);
  assert.ok(!readFileSync(join(a, 'data')).equals(readFileSync(join(c, 'data'))));
  assert.equal(readFileSync(join(a, 'kcore_dir/modules'), 'utf8'), '');
});

test('generated code is real x86-64: every planned instruction decodes with iced-x86 at its address and length', () => {
  const p = generateProgram({ seed: 11, sites: 10 });
  // The trampoline's bytes exist only after its poke: decode with them in place.
  const code = p.code.slice();
  assert.ok(p.code.subarray(p.trampoline.off, p.trampoline.off + p.trampoline.bytes.length).every((b) => b === 0xcc));
  code.set(p.trampoline.bytes, p.trampoline.off);
  const d = new iced.Decoder(64, code, iced.DecoderOptions.None);
  d.ip = p.base;
  const ins = new iced.Instruction();
  for (let i = 0; i < p.off.length; i++) {
    d.position = p.off[i]!;
    d.ip = p.base + BigInt(p.off[i]!);
    d.decodeOut(ins);
    assert.ok(!ins.isInvalid, `invalid at +0x${p.off[i]!.toString(16)}`);
    assert.equal(ins.length, p.len[i]!, `length at +0x${p.off[i]!.toString(16)}`);
  }
  for (const s of p.sites) {
    const now = p.code.subarray(s.off, s.off + s.len);
    assert.deepEqual([...now], [...(s.initial ? s.jmpBytes : s.len === 5 ? NOP5 : NOP2)]);
    d.position = 0;
    const jd = new iced.Decoder(64, s.jmpBytes, iced.DecoderOptions.None);
    jd.ip = p.base + BigInt(s.off);
    jd.decodeOut(ins);
    assert.equal(ins.nearBranchTarget, p.base + BigInt(s.target));
  }
  d.free();
  ins.free();
});

test(
  'perf sees the pokes: one TEXT_POKE per flip at the flip time, symbolized from kcore_dir/kallsyms, plus ' +
    "the trampoline's (old len 0)",
  (t) => {
    if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
    const out = join(dir, 'p');
    const s = simulate({ out, seed: 5, size: 30_000, flips: 5 });
    const r = runPerf(['script', '-i', out, '--show-text-poke-events', '--itrace=']);
    assert.ok(r && r.status === 0, r?.stderr);
    const all = r!.stdout.split('\n').filter((l) => l.includes('PERF_RECORD_TEXT_POKE'));
    const created = all.filter((l) => / old len 0 new len \d+/.test(l));
    assert.equal(created.length, 1, 'one trampoline created');
    const lines = all.filter((l) => !created.includes(l));
    assert.equal(lines.length, s.flips.length);
    lines.forEach((l, i) => {
      const f = s.flips[i]!;
      assert.match(
        l,
        new RegExp(`TEXT_POKE ${f.addr.slice(2)} (pp_l\\d_fn\\d+)\\+0x[0-9a-f]+ old len ${f.len} new len ${f.len}`),
      );
      const us = BigInt(f.time) / 1000n;
      assert.ok(
        l.includes(`${us / 1_000_000n}.${(us % 1_000_000n).toString().padStart(6, '0')}:`),
        `${l} vs ${f.time}`,
      );
    });
    assert.equal(r!.stderr.trim(), '');
  },
);

test('ground truth size equals what perf decodes; CLI sim prints a summary and rejects bad flags', (t) => {
  const out = join(dir, 'cli');
  const r = runCli(['sim', '-o', out, '--seed', '9', '--size', '20000', '--cpus', '3', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  assert.equal(s.cpus, 3);
  const truth = readTruth(out);
  assert.equal(
    truth.cpus.reduce((a, c) => a + c.off.length, 0),
    s.instructions,
  );
  const bad = runCli(['sim', '-o', out, '--cpus', 'x']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--cpus must be an integer/);
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const p = runPerf(['script', '-i', out, '--itrace=i0ns', '-F', 'ip']);
  assert.ok(p && p.status === 0);
  assert.equal(p!.stdout.split('\n').filter(Boolean).length, s.instructions);
});
