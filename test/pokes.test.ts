/**
 * perfpoke pokes against perf 6.1: the same pokes, in the same order, with
 * the same `sym+0xoff` as `perf script --show-text-poke-events` prints from
 * the kcore_dir's kallsyms — on the committed fixture and on random symbol
 * tables (duplicates, weak/local/data/filtered types, module symbols).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runCli, runPerf, repoRoot } from './cli.js';
import { flatPokes, parseLines, validateLines } from './json-lines.js';
import { loadMachine } from '../src/machine/from-perf-data.js';
import {
  KTEXT,
  KTEXT_SIZE,
  MODTEXT,
  MODTEXT_SIZE,
  writeKcoreDir,
  type SiteHistory,
} from './fixtures/kcore/scenario.js';
import { cannotCompare, needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const basic = join(repoRoot, 'test', 'fixtures', 'kcore', 'basic');

interface PerfPoke {
  time: string;
  addr: string;
  sym: string;
  oldLen: number;
  newLen: number;
  old: string;
  new: string;
}

/** Parse perf script --show-text-poke-events output. */
function parsePerf(out: string): PerfPoke[] {
  const res: PerfPoke[] = [];
  const lines = out.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /\s(\d+\.\d{6}): PERF_RECORD_TEXT_POKE ([0-9a-f]+) (\S*) ?old len (\d+) new len (\d+)$/.exec(lines[i]!);
    if (!m) continue;
    const p: PerfPoke = {
      time: m[1]!,
      addr: m[2]!,
      sym: m[3]!,
      oldLen: Number(m[4]),
      newLen: Number(m[5]),
      old: '',
      new: '',
    };
    for (let j = i + 1; j < lines.length; j++) {
      const b = /^\s+(Old|New) bytes: (.*)$/.exec(lines[j]!);
      if (!b) break;
      // perf prints 16 bytes a line: long ones (trampolines) take several
      if (b[1] === 'Old') p.old = p.old ? `${p.old} ${b[2]!.trim()}` : b[2]!.trim();
      else p.new = p.new ? `${p.new} ${b[2]!.trim()}` : b[2]!.trim();
    }
    res.push(p);
  }
  return res;
}

function ours(dir: string): PerfPoke[] {
  const r = runCli(['pokes', '-i', dir, '--json']);
  assert.equal(r.status, 0, r.stderr);
  return flatPokes(r.stdout).map((p) => ({
    time: p.time,
    addr: p.addr,
    sym: p.sym,
    oldLen: p.oldLen,
    newLen: p.newLen,
    old: p.old,
    new: p.new,
  }));
}

test('pokes on the kcore fixture: same pokes, order, sym+off and bytes as perf script', (t) => {
  const perf = runPerf(['script', '-i', basic, '--show-text-poke-events']);
  if (perf?.status !== 0) return cannotCompare(t, `perf script unavailable: ${perf?.stderr ?? 'no /usr/bin/perf'}`);
  const want = parsePerf(perf.stdout);
  assert.ok(want.length >= 20, `perf shows ${want.length} pokes`);
  assert.ok(
    want.some((p) => p.sym.startsWith('mod_fn+')) && want.some((p) => p.sym.startsWith('optimized_kprobe_insn_page+')),
  );
  assert.deepEqual(ours(basic), want);
});

test('pokes text output: one line per poke, kinds named', () => {
  const r = runCli(['pokes', '-i', basic]);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  const byAddr = (a: string) => lines.filter((l) => l.includes(` ${a} `));
  assert.match(
    byAddr('ffffffff81000110')[0]!,
    /do_sys_open\+0x10 jump-label len 5\/5: 0f 1f 44 00 00 -> e9 6b 00 00 00 \| nopl .* -> jmp 0xffffffff81000180/,
  );
  assert.match(byAddr('ffffffff81000104')[0]!, / ftrace /);
  assert.match(
    byAddr('ffffffff81000220')[0]!,
    / static-call .*call 0xffffffff81001000 <target_a\+0x0> -> call 0xffffffff81001100 <target_b\+0x0>/,
  );
  assert.match(byAddr('ffffffff81000400')[0]!, / static-call .*ret/);
  assert.deepEqual(
    byAddr('ffffffff81000508').map((l) => / (kprobe|optprobe) /.exec(l)![1]),
    ['kprobe', 'optprobe', 'kprobe', 'kprobe'],
  );
  assert.deepEqual(
    byAddr('ffffffffc0200000').map((l) => / (trampoline-\w+) /.exec(l)![1]),
    ['trampoline-create', 'trampoline-remove'],
  );
  assert.match(byAddr('ffffffff81000610')[0]!, / jump-label len 2\/2: 66 90 -> eb 10 /);
});

test('pokes --site shows one site history', () => {
  const r = runCli(['pokes', '-i', basic, '--site', 'do_sys_open+0x12', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const j = flatPokes(r.stdout);
  assert.deepEqual(
    j.map((p) => p.time),
    ['1000.000001', '1000.000005', '1000.000009'],
  );
  assert.ok(j.every((p) => p.addr === 'ffffffff81000110'));
  const h = runCli(['pokes', '--help']);
  assert.equal(h.status, 0);
  assert.match(h.stdout, /--site/);
});

/** In-process (the CLI's start-up costs seconds on a loaded machine): what `pokes --json` prints as addr and sym. */
async function oursInProcess(dir: string): Promise<string[]> {
  const m = await loadMachine(dir);
  const all = [...m.image.pokes.map((pp) => pp.poke)];
  return all.map((p) => `${p.addr.toString(16)} ${m.symbolizer.symOff(p.addr, p)}`);
}

test('sym+off equals perf on random kallsyms tables (property, 6 runs of perf)', async (t) => {
  if (!needTool(t, 'perf')) return;
  const types = ['T', 't', 'W', 'w', 'D', 'd', 'B', 'b', 'r', 'R', 'A'];
  const symArb = fc.record({
    off: fc.integer({ min: 0, max: KTEXT_SIZE + 0x800 }),
    type: fc.constantFrom(...types),
    name: fc.stringMatching(/^_{0,2}[a-z][a-z0-9_]{0,12}$/),
  });
  const modArb = fc.record({
    off: fc.integer({ min: 0, max: MODTEXT_SIZE - 1 }),
    type: fc.constantFrom('t', 'T', 'd', 'b', 'r'),
    name: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
  });
  const dir = tempDir('perfpoke-syms-');
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(symArb, { minLength: 1, maxLength: 40 }),
        fc.array(modArb, { maxLength: 10 }),
        fc.uniqueArray(fc.integer({ min: 0, max: KTEXT_SIZE + MODTEXT_SIZE - 1 }), { minLength: 1, maxLength: 30 }),
        async (syms, mods, pokeOffs) => {
          // dups at one address: reuse some offsets
          const ksyms = syms.map((s, i) => ({ ...s, off: i % 5 === 4 ? syms[i - 1]!.off : s.off }));
          const lines = [`${KTEXT.toString(16)} T _text`, `${KTEXT.toString(16)} T _stext`];
          for (const s of ksyms) lines.push(`${(KTEXT + BigInt(s.off)).toString(16)} ${s.type} ${s.name}`);
          for (const s of mods) lines.push(`${(MODTEXT + BigInt(s.off)).toString(16)} ${s.type} ${s.name}\t[mymod]`);
          // kallsyms is sorted by address, modules after the kernel
          const text = `${lines
            .sort((a, b) => (BigInt(`0x${a.split(' ')[0]}`) < BigInt(`0x${b.split(' ')[0]}`) ? -1 : 1))
            .join('\n')}\n`;
          const sites: SiteHistory[] = pokeOffs.map((o, i) => {
            const addr = o < KTEXT_SIZE ? KTEXT + BigInt(o) : MODTEXT + BigInt(o - KTEXT_SIZE);
            return { name: `p${i}`, addr, states: [[0xcc], [0x90]], times: [1_000_000_000n + BigInt(i) * 1000n] };
          });
          const d = join(dir, 'case');
          writeKcoreDir(d, sites, { kallsyms: text });
          const perf = runPerf(['script', '-i', d, '--show-text-poke-events']);
          assert.ok(perf && perf.status === 0, perf?.stderr);
          const want = parsePerf(perf.stdout).map((p) => `${p.addr} ${p.sym}`);
          const got = await oursInProcess(d);
          assert.deepEqual(got, want);
        },
      ),
      { numRuns: Number(process.env.PERFPOKE_SYM_RUNS ?? 6), seed: Number(process.env.PERFPOKE_SYM_SEED ?? 4242) },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--text-poke-abi rfc reads the seed's type-19 form: the same pokes as the upstream form", async () => {
  const { dataRecords, basicSites } = await import('./fixtures/kcore/scenario.js');
  const { writeMiniPerfData } = await import('./fixtures/kcore/mini-perf-data.js');
  const { writeFileSync } = await import('node:fs');
  const dir = tempDir('perfpoke-rfc-');
  try {
    const recs = dataRecords(basicSites()).map((r) => (r.kind === 'text_poke' ? { ...r, rfc: true } : r));
    writeFileSync(join(dir, 'rfc.data'), writeMiniPerfData(recs));
    writeFileSync(join(dir, 'final.data'), writeMiniPerfData(dataRecords(basicSites())));
    const want = (await loadMachine(join(dir, 'final.data'))).pokes.map((p) => [
      p.time,
      p.addr,
      [...p.oldBytes],
      [...p.newBytes],
    ]);
    const got = (await loadMachine(join(dir, 'rfc.data'), { textPokeAbi: 'rfc' })).pokes.map((p) => [
      p.time,
      p.addr,
      [...p.oldBytes],
      [...p.newBytes],
    ]);
    assert.ok(want.length > 10);
    assert.deepEqual(got, want);
    assert.equal((await loadMachine(join(dir, 'rfc.data'))).pokes.length, 0, 'type 19 is CGROUP unless asked for');
    const r = runCli(['pokes', '-i', join(dir, 'rfc.data'), '--text-poke-abi', 'rfc', '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(flatPokes(r.stdout).length, want.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pokes --json: JSON Lines, one "poke" object per poke, valid against docs/json/poke.schema.json', () => {
  const r = runCli(['pokes', '-i', basic, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const lines = parseLines(r.stdout);
  validateLines(lines);
  assert.ok(lines.length > 20 && lines.every((l) => l.type === 'poke'));
  const first = lines[0]!;
  assert.match(first.addr as string, /^0x[0-9a-f]+$/);
  assert.match(first.time_ns as string, /^\d+$/);
  const ns = BigInt(first.time_ns as string);
  assert.equal(first.time, `${ns / 1_000_000_000n}.${((ns / 1000n) % 1_000_000n).toString().padStart(6, '0')}`);
  assert.match(first.old as string, /^([0-9a-f]{2})*$/);
});

test('pokes on the real two-consumer recording: each poke once; --all-copies lists the copies perf prints', () => {
  const rec = join(repoRoot, 'test', 'fixtures', 'real-kernel', 'perfpoke-two');
  const once = flatPokes(runCli(['pokes', '-i', rec, '--json']).stdout);
  const all = flatPokes(runCli(['pokes', '-i', rec, '--json', '--all-copies']).stdout);
  assert.equal(once.length, 298);
  assert.ok(once.every((p) => !p.copy && p.consistent));
  assert.equal(all.length, 596);
  assert.equal(all.filter((p) => p.copy).length, 298);
  // each copy follows its poke, with the same address and bytes
  all.forEach((p, i) => {
    if (!p.copy) return;
    const lead = all[i - 1]!;
    assert.deepEqual([p.addr, p.old, p.new], [lead.addr, lead.old, lead.new]);
  });
  const perf = runPerf(['script', '-i', rec, '--show-text-poke-events']);
  if (perf && perf.status === 0) {
    // perf 6.1 shows every copy (the inflated ones at time 0): the same multiset as --all-copies
    const key = (p: { addr: string; old: string; new: string }): string => `${p.addr} ${p.old} ${p.new}`;
    assert.deepEqual(parsePerf(perf.stdout).map(key).sort(), all.map(key).sort());
  } else if (process.env.CI === 'true') assert.fail('perf 6.1 is needed in CI');
  const txt = runCli(['pokes', '-i', rec]);
  assert.match(
    txt.stdout,
    /\n\(298 poke\(s\) delivered twice, one copy per text_poke event, listed once: --all-copies shows them\)\n$/,
  );
  const txtAll = runCli(['pokes', '-i', rec, '--all-copies']);
  assert.equal(
    (txtAll.stdout.match(/\(copy: the same poke as at \d+\.\d{6}, from another text_poke event\)/g) ?? []).length,
    298,
  );
});
