/**
 * perfpoke decode beyond the basic experiment: a recording with one lost
 * poke (error list equal to perf's), the --cpu filter and --json report,
 * and raw mode against Intel's ptxed 2.3 (LIBIPT23_BIN, test/libipt23.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, existsSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { simulate } from '../src/sim/simulate.js';
import { loadPtRecording } from '../src/intelpt/flow/recording.js';
import { PerfFile } from '../src/perfdata/perf-file.js';
import { readWholeTrace } from '../src/intelpt/flow/trace-source.js';
import { runCli, runPerf } from './cli.js';
import { libipt23Tools, noLibipt23 } from './libipt23.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const perfOk = existsSync('/usr/bin/perf') && runPerf(['--version']) !== null;
const dir = tempDir('perfpoke-decode-');
test.after(() => rmSync(dir, { recursive: true, force: true }));

test("one lost poke: the error list equals perf's, --cpu keeps one CPU, --json locates each error in its AUX buffer", {
  timeout: 120_000,
}, async (t) => {
  const full = join(dir, 'full');
  const s = simulate({ out: full, seed: 21, size: 50_000, flips: 8, truth: false });
  const lost = s.flips.findIndex((f, i) => s.flips.slice(i + 1).some((g) => g.site === f.site));
  assert.ok(lost >= 0, 'seed 21 flips some site twice');
  const out = join(dir, 'lost');
  simulate({ out, seed: 21, size: 50_000, flips: 8, truth: false, lostPokes: [lost] });
  const j = runCli(['decode', '-i', out, '--json']);
  assert.equal(j.status, 0, j.stderr);
  const objs = j.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const rep = objs[objs.length - 1];
  assert.equal(rep.type, 'decode_summary');
  assert.equal(rep.pokes, s.flips.length - 1 + 1, 'every flip but the lost one, plus the trampoline');
  assert.ok(rep.errors > 0);
  const errs = objs.filter((o) => o.type === 'decode_error');
  assert.equal(errs.length, rep.errors);
  // the AUXTRACE records of the file, by file offset: trace bytes each
  const auxSizes = new Map<number, number>();
  const pf = await PerfFile.open(join(out, 'data'));
  for await (const r of pf.records()) if (r.type === 71) auxSizes.set(r.fileOffset, r.auxData?.length ?? 0);
  await pf.close();
  assert.ok(auxSizes.size > 0);
  for (const e of errs) {
    const size = auxSizes.get(e.aux_buffer?.offset);
    assert.ok(size !== undefined, `error at ${JSON.stringify(e.aux_buffer)} names an AUXTRACE record`);
    assert.ok(
      e.aux_buffer.buffer_offset < size,
      `error offset ${e.aux_buffer.buffer_offset} inside the ${size}-byte buffer`,
    );
    assert.ok(BigInt(e.time_ns) >= BigInt(s.flips[lost]!.time), 'no error before the lost poke');
  }
  const c1 = runCli(['decode', '-i', out, '--itrace=e', '--cpu', '1']);
  assert.equal(c1.status, 0, c1.stderr);
  const lines = c1.stdout.split('\n').filter(Boolean);
  assert.ok(lines.every((l) => / cpu 1 /.test(l)));
  assert.equal(lines.length, objs.find((o) => o.type === 'decode_cpu' && o.cpu === 1).errors);
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const p = runPerf(['script', '-i', out, '--itrace=e']);
  assert.ok(p && p.status === 0);
  const ours = runCli(['decode', '-i', out, '--itrace=e']);
  assert.deepEqual(
    ours.stdout.split('\n').filter(Boolean).sort(),
    p!.stdout
      .split('\n')
      .filter((l) => l.includes('trace error'))
      .sort(),
  );
});

test("raw mode prints what Intel's ptxed 2.3 prints (--no-inst, decoders, blocks, --event:ip, --stat) on sim traces", {
  timeout: 400_000,
}, async (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const ptxed: string = tools.ptxed;
  // seed 2 with jump-label flips and no pokes applied: ptxed reports errors (bad compressed returns)
  for (const [seed, flips] of [
    [3, 0],
    [2, 8],
  ] as const) {
    const rec0 = join(dir, `raw${seed}`);
    simulate({ out: rec0, seed, size: 20_000, flips, truth: false, trampoline: false });
    const rec = await loadPtRecording(rec0);
    const seg = rec.machine.image.segments[0]!;
    const text = join(dir, 'text.bin');
    writeFileSync(text, seg.bytes);
    const img = `${text}:0x${seg.vaddr.toString(16)}`;
    for (const c of rec.cpus) {
      const trace = join(dir, `cpu${c.cpu}.pt`);
      writeFileSync(trace, readWholeTrace(c.trace));
      // ptxed's options and decode's spelling of them
      const runs: [ptxed: string[], decode: string[]][] = [
        [['--insn-decoder'], ['--insn-decoder']],
        [['--event:ip'], ['--event-ip']],
        [
          ['--insn-decoder', '--stat'],
          ['--insn-decoder', '--stat'],
        ],
        [
          ['--stat:insn', '-q'],
          ['--stat-insn', '--errors-only'],
        ],
        // the block decoder's blocks over kernel-like code: where libipt's block cache ends them
        [
          ['--block:show-blocks', '--stat'],
          ['--block-show-blocks', '--stat'],
        ],
        [
          ['--block:show-blocks', '--block:end-on-call', '--block:end-on-jump', '--stat:blocks'],
          ['--block-show-blocks', '--block-end-on-call', '--block-end-on-jump', '--stat-blocks'],
        ],
      ];
      for (const [o, cli] of runs) {
        const lib = spawnSync(ptxed, [...o, '--pt', trace, '--raw', img, '--no-inst'], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
        assert.equal(lib.status, 0, lib.stderr);
        const ours = runCli(['decode', '--raw-pt', trace, '--image', img, '--format=ptxed', ...cli]);
        assert.equal(ours.status, 0, ours.stderr);
        if (!o.includes('-q')) assert.ok(lib.stdout.split('\n').length > 1000);
        if (flips) assert.match(lib.stdout, /error: bad compressed return/);
        assert.equal(ours.stdout, lib.stdout);
      }
    }
  }
});

test('decode rejects bad usage with exit 2', () => {
  const r = runCli(['decode']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /perf\.data: no such file or directory/); // no -i: ./perf.data, as perf
  const r2 = runCli(['decode', '-i', dir, '--itrace=x']);
  assert.equal(r2.status, 2);
  // raw mode: a malformed CPU model is refused in one line
  const trace = join(dir, 'bad-usage.pt');
  const img = join(dir, 'bad-usage.bin');
  writeFileSync(trace, new Uint8Array(16).fill(0));
  writeFileSync(img, new Uint8Array([0x90]));
  const r3 = runCli(['decode', '--raw-pt', trace, '--image', `${img}:0x1000`, '--cpu', 'six']);
  assert.equal(r3.status, 2, r3.stderr);
  assert.equal(r3.stderr.trim().split('\n').length, 1, r3.stderr);
  assert.match(r3.stderr, /f\/m\[\/s\]/);
  const ok = runCli(['decode', '--raw-pt', trace, '--image', `${img}:0x1000`, '--insn-decoder', '--stat']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, 'insn: 0.\n');
  // the block decoder (ptxed's default) also counts its blocks, as ptxed's --stat does
  const blk = runCli(['decode', '--raw-pt', trace, '--image', `${img}:0x1000`, '--stat', '--block-show-blocks']);
  assert.equal(blk.status, 0, blk.stderr);
  assert.equal(blk.stdout, 'insn: 0.\nblocks:\t0.\n');
});

test("PSB+ with FUP inside bursts (--mid-burst-psb): errors without pokes equal perf's, flow with pokes equals " +
  "perf's", {
  timeout: 120_000,
}, async (t) => {
  if (!perfOk) return cannotCompare(t, 'perf 6.1 not available at /usr/bin/perf');
  const { decodeFlow } = await import('../src/intelpt/flow/decode.js');
  const { perfErrorLine } = await import('../src/cli/commands/decode.js');
  for (const textPokes of [false, true]) {
    const out = join(dir, `mid-${textPokes}`);
    simulate({ out, seed: 3, size: 40_000, truth: false, midBurstPsb: true, psbPeriod: 512, textPokes });
    const rec = await loadPtRecording(out);
    const lines: string[] = [];
    const ips: string[] = [];
    decodeFlow({
      cpus: rec.cpus,
      pokes: rec.pokes,
      code: rec.machine.image,
      timeConv: rec.timeConv,
      retCompression: rec.retCompression,
      sink: {
        error: (e) => lines.push(perfErrorLine(e, rec.timeConv)),
        insns: (cpu, insns, from, to) => {
          for (let i = from; i < to; i++) ips.push(`${cpu} ${insns[i]!.ip.toString(16)}`);
        },
      },
    });
    const pe = runPerf(['script', '-i', out, '--itrace=e']);
    assert.ok(pe && pe.status === 0);
    const perfLines = pe!.stdout
      .split('\n')
      .filter((l) => l.includes('trace error'))
      .sort();
    assert.deepEqual(lines.sort(), perfLines);
    if (textPokes) {
      assert.equal(lines.length, 0);
      const pi = runPerf(['script', '-i', out, '--itrace=i0ns', '-F', 'cpu,ip']);
      assert.ok(pi && pi.status === 0);
      const perfIps = pi!.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const m = /^\[(\d+)\]\s+([0-9a-f]+)/.exec(l.trim())!;
          return `${Number(m[1])} ${m[2]}`;
        });
      const key = (s: string): number => Number(s.split(' ')[0]);
      const stable = (a: string[]): string[] =>
        a
          .map((x, i) => [x, i] as const)
          .sort((p, q) => key(p[0]) - key(q[0]) || p[1] - q[1])
          .map((x) => x[0]);
      assert.deepEqual(stable(ips), stable(perfIps));
    } else assert.ok(lines.length > 10);
  }
});
