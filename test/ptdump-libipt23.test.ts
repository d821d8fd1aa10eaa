import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ptdumpLines, type PtdumpOptions } from '../src/format/pt-packets-ptdump.js';
import { parseCpu } from '../src/intelpt/cpu.js';
import { libiptEncodeMany, libiptHarness } from '../tools/libipt-harness/harness.js';
import { libipt23Tools, noLibipt23, runEach } from './libipt23.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { runCli } from './cli.js';

/**
 * `--format=ptdump` against Intel's ptdump 2.3 itself, byte for byte, on
 * streams fast-check generates (timing-heavy: PSB+ with TSC/TMA/CBR, MTC
 * runs, CYC, OVF, PIP/VMCS/PTW, MODE with IF, TRIG/CFE/EVD, errata patterns,
 * garbage) encoded by libipt's encoder (tools/libipt-harness pt-enc), with
 * every ptdump option. The printed table is the per-option match count
 * (docs/intel-pt-packets.md quotes it).
 */

interface Params {
  mtcFreq: number;
  nomFreq: number;
  eax: number;
  ebx: number;
}

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const hx = (v: bigint | number): string => `0x${v.toString(16)}`;
const bytesHex = (b: number[]): string => b.map((x) => x.toString(16).padStart(2, '0')).join(' ');

/** One step of a stream; `mtc+`/`tsc+` are resolved to increasing values in order. */
const step = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 0x3ff }).map((v) => `cyc ${v}`) },
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 3 }).map((d) => `mtc+ ${d}`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((v) => `mtc ${v}`) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 0x100000 }).map((d) => `tsc+ ${d}`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0x1ff }))
      .map(([c, f]) => `tma ${c} ${f}`),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 60 }).map((v) => `cbr ${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('ovf', 'pad', 'psbend', 'stop') },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('tip', 'tip.pge', 'tip.pgd', 'fup'), fc.constantFrom(0, 1, 2, 3, 4, 6), u64)
      .map(([k, ipc, ip]) => `${k} ${ipc} ${hx(ip)}`),
  },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }).map((n) => `tnt.8 ${n} ${(1 << n) - 2}`) },
  { weight: 1, arbitrary: fc.tuple(u64, fc.boolean()).map(([v, nr]) => `pip ${hx(v & 0xffffffffffe0n)} ${+nr}`) },
  { weight: 1, arbitrary: u64.map((v) => `vmcs ${hx(v & 0xfffffffff000n)}`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 1 }), u64, fc.boolean())
      .map(([plc, v, ip]) => `ptw ${plc} ${hx(plc ? v : v & 0xffffffffn)} ${+ip}`),
  },
  // MODE.Exec with any of CS.L, CS.D, IF (libipt 2.0's encoder has no IF bit)
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 7 }).map((m) => `raw 99 ${bytesHex([m])}`) },
  { weight: 1, arbitrary: fc.tuple(fc.boolean(), fc.boolean()).map(([a, b]) => `mode.tsx ${+a} ${+b}`) },
  // TRIG (d9 flags trbv [icnt16]), CFE, EVD: libipt 2.3 packets the 2.0 encoder lacks
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 0xffff }))
      .map(([f, trbv, icnt]) =>
        f & 2 ? `raw d9 ${bytesHex([f << 5, trbv, icnt & 255, icnt >> 8])}` : `raw d9 ${bytesHex([f << 5, trbv])}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
      .map(([t, v]) => `raw 02 13 ${bytesHex([t, v])}`),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 31 }).map((t) => `raw 02 53 ${bytesHex([t, 1, 2, 3, 4, 5, 6, 7, 8])}`),
  },
  // errata patterns: SKD007 (2-byte CYC, then an OVF opcode), SKZ84 (TMA with reserved bits)
  { weight: 1, arbitrary: fc.constant('raw 07 02 f3') },
  { weight: 1, arbitrary: fc.constant('raw 02 73 01 00 01 00 04') },
  // BBP (not libipt) and garbage: errors and resyncs
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 6 }).map((b) => `raw ${bytesHex([...b])}`) },
);

const header = fc
  .tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0x1ff }))
  .map(([cbr, ctc, fcv]) => ['psb', `cbr ${cbr}`, 'tsc+ 1', `tma ${ctc} ${fcv}`, 'psbend']);

const stream = fc.tuple(
  fc.array(fc.oneof({ weight: 12, arbitrary: step }, { weight: 1, arbitrary: header }), {
    minLength: 1,
    maxLength: 80,
  }),
  header,
  fc.record({
    // hardware MTC frequencies are 0-15; ptdump takes any u8 (shifts past 31 wrap as x86 shifts do)
    mtcFreq: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 15 }) }, fc.integer({ min: 16, max: 40 })),
    nomFreq: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 60 }) }, fc.integer({ min: 61, max: 255 })),
    eax: fc.integer({ min: 1, max: 4 }),
    ebx: fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 1, max: 400 }) },
      fc.integer({ min: 401, max: 0xffffffff }),
    ),
  }),
);

/** Resolves the relative mtc+/tsc+ steps into a pt-enc description. */
function describe(steps: (string | string[])[], first: string[]): string {
  let mtc = 0;
  let tsc = 0x1000000n;
  const lines: string[] = [];
  for (const s of [first, ...steps].flat()) {
    const [op, arg = '0'] = s.split(' ');
    if (op === 'mtc+') {
      mtc = (mtc + Number(arg)) & 255;
      lines.push(`mtc ${mtc}`);
    } else if (op === 'tsc+') {
      tsc += BigInt(arg);
      lines.push(`tsc ${hx(tsc)}`);
    } else lines.push(s);
  }
  return `${lines.join('\n')}\n`;
}

/** The option sets compared, as ptdump arguments (timing ones get the stream's parameters). */
function optionSets(p: Params): [string, string[]][] {
  const clock = ['--cpuid-0x15.eax', `${p.eax}`, '--cpuid-0x15.ebx', `${p.ebx}`, '--mtc-freq', `${p.mtcFreq}`];
  const nom = ['--nom-freq', `${p.nomFreq}`];
  return [
    ['(default)', []],
    ['--no-sync', ['--no-sync']],
    ['--raw --no-offset', ['--raw', '--no-offset']],
    ['--lastip --exec-mode', ['--lastip', '--exec-mode']],
    ['--no-pad --no-timing', ['--no-pad', '--no-timing']],
    ['--quiet --time', ['--quiet', '--time', ...clock]],
    ['--time', ['--time', ...clock, ...nom]],
    ['--time (no nom-freq)', ['--time', ...clock]],
    ['--time --time-delta', ['--time', '--time-delta', ...clock, ...nom]],
    ['--tcal', ['--tcal', ...clock, ...nom]],
    ['--tcal --time-delta', ['--tcal', '--time-delta', ...clock, ...nom]],
    ['--time --no-tcal', ['--time', '--no-tcal', ...clock, ...nom]],
    ['--tcal --no-tcal', ['--tcal', '--no-tcal', ...clock, ...nom]],
    ['--time --no-wall-clock', ['--time', '--no-wall-clock', ...clock, ...nom]],
    ['--tcal --keep-tcal-on-ovf', ['--tcal', '--keep-tcal-on-ovf', ...clock, ...nom]],
    ['--time --no-cyc', ['--time', '--no-cyc', ...clock, ...nom]],
    ['--cpu 6/0x4e --tcal (SKL168, SKD007)', ['--cpu', '6/0x4e', '--tcal', ...clock, ...nom]],
    ['--cpu 6/85 --time (SKZ84)', ['--cpu', '6/85', '--time', ...clock]],
    ['--cpu 6/1 (unknown)', ['--cpu', '6/1']],
    ['--cpu 0x13/1/3 --raw', ['--cpu', '0x13/1/3', '--raw']],
  ];
}

/** ptdump arguments as PtdumpOptions (the CLI maps its options the same way: src/cli/commands/pt-dump.ts). */
function toOptions(args: string[]): PtdumpOptions {
  const o: PtdumpOptions = {};
  const flag: Record<string, keyof PtdumpOptions> = {
    '--no-sync': 'noSync',
    '--quiet': 'quiet',
    '--no-pad': 'noPad',
    '--no-timing': 'noTiming',
    '--no-cyc': 'noCyc',
    '--no-offset': 'noOffset',
    '--raw': 'rawBytes',
    '--lastip': 'lastIp',
    '--exec-mode': 'execMode',
    '--time': 'time',
    '--tcal': 'tcal',
    '--time-delta': 'timeDelta',
    '--no-tcal': 'noTcal',
    '--no-wall-clock': 'noWallClock',
    '--keep-tcal-on-ovf': 'keepTcalOnOvf',
  };
  const num: Record<string, 'mtcFreq' | 'nomFreq' | 'cpuid15Eax' | 'cpuid15Ebx'> = {
    '--mtc-freq': 'mtcFreq',
    '--nom-freq': 'nomFreq',
    '--cpuid-0x15.eax': 'cpuid15Eax',
    '--cpuid-0x15.ebx': 'cpuid15Ebx',
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    const f = flag[a];
    const n = num[a];
    if (f) (o as Record<string, unknown>)[f] = true;
    else if (n) o[n] = Number(args[++i]);
    else if (a === '--cpu') o.cpu = parseCpu(args[++i] ?? '') ?? undefined;
    else throw new Error(`toOptions: ${a}`);
  }
  return o;
}

test('ptdump 2.3 text, every option: random timing-heavy streams equal byte for byte', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const dir = tempDir('ptdump23-');
  const cases = fc.sample(stream, { numRuns: 60, seed: 0x2a3 });
  const descriptions = cases.map(([steps, first]) => describe(steps, first));
  const streams = libiptEncodeMany(hv.ptEnc, descriptions, dir);
  const files = streams.map((b, k) => {
    const f = join(dir, `s${k}.pt`);
    writeFileSync(f, b);
    return f;
  });
  const table: string[] = [];
  const failures: string[] = [];
  const names = optionSets(cases[0]![2]).map(([name]) => name);
  // one ptdump run per stream and option set, with the stream's own timing parameters
  const jobs = names.flatMap((_n, setIndex) => files.map((f, k) => [...optionSets(cases[k]![2])[setIndex]![1], f]));
  const outputs = runEach(tools.ptdump, jobs);
  names.forEach((name, setIndex) => {
    let equal = 0;
    files.forEach((_file, k) => {
      const args = optionSets(cases[k]![2])[setIndex]![1];
      const theirs = outputs[setIndex * files.length + k];
      const ours = [...ptdumpLines(streams[k]!, toOptions(args))].map((l) => `${l}\n`).join('');
      if (ours === theirs) equal++;
      else if (failures.length < 3)
        failures.push(`${name} ${args.join(' ')} on:\n${descriptions[k]}\nours:\n${ours}\nptdump:\n${theirs}`);
    });
    table.push(`${name}: ${equal}/${files.length}`);
  });
  t.diagnostic('ptdump 2.3 runs equal / runs, per option set:');
  for (const row of table) t.diagnostic(row);
  assert.deepEqual(failures, []);
  // the streams reach what the options are about (so equality above means something)
  const all = outputs.join('');
  for (const what of [
    /tsc {2}00[0-9a-f]{14}$/m, // an estimated TSC
    /fcr {2}[+-]?[0-9]+\.[0-9]{3}$/m, // a calibration
    /fcr {2}[+-][0-9]+\.[0-9]{3}$/m,
    /tsc {2}\+[0-9a-f]+$/m,
    /error updating time: no calibration\]$/m,
    /error printing time: no timing information\]$/m,
    /error decoding packet: unknown opcode\]$/m,
    /<invalid>$/m, // SKZ84
    /ip {3}<suppressed>$/m,
    /em {3}64-bit$/m,
    /trig {7}[0-9a-f]{2}.*icnt: /m,
    /^\[0: failed to determine errata: unknown cpu\]$/m,
    /type vmexit_intr$/m,
  ])
    assert.match(all, what);
});

test('perfpoke pt-dump --raw --format=ptdump with ptdump options prints what ptdump 2.3 prints', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const hv = libiptHarness();
  if ('skip' in hv) return cannotCompare(t, hv.skip);
  const dir = tempDir('ptdump23-cli-');
  const [[steps, first, p]] = fc.sample(stream, { numRuns: 1, seed: 0x17 }) as [
    [(string | string[])[], string[], Params],
  ];
  const [bytes] = libiptEncodeMany(hv.ptEnc, [describe([...steps, ...steps], first)], dir);
  const file = join(dir, 'cli.pt');
  writeFileSync(file, bytes!);
  // ptdump's --raw is --raw-bytes here (pt-dump's --raw names the input kind)
  const sets = optionSets(p).filter(([name]) =>
    /^(\(default\)|--raw|--lastip|--tcal --time-delta|--cpu 6\/1|--quiet)/.test(name),
  );
  assert.equal(sets.length, 6);
  for (const [name, args] of sets) {
    const [theirs] = runEach(tools.ptdump, [[...args, file]]);
    const ours = runCli([
      'pt-dump',
      '--raw',
      '-i',
      file,
      '--format=ptdump',
      ...args.map((a) => (a === '--raw' ? '--raw-bytes' : a)),
    ]);
    assert.equal(ours.status, 0, ours.stderr);
    assert.equal(ours.stdout, theirs, name);
  }
  // ptdump's FILE:from-to: a part of the stream, offsets from its start
  const part = `${file}:0x10-${Math.min(bytes!.length, 0x400)}`;
  const [theirs] = runEach(tools.ptdump, [['--no-sync', '--lastip', part]]);
  const ours = runCli(['pt-dump', '--raw', '-i', part, '--format=ptdump', '--no-sync', '--lastip']);
  assert.equal(ours.stdout, theirs, part);
  assert.ok(theirs && theirs.length > 0);
  // ptdump's own refusals, and its options without --format=ptdump: one line, exit 2
  for (const [args, msg] of [
    [['--format=ptdump', '--time', '--tcal'], /specify either --time or --tcal/],
    [['--format=ptdump', '--nom-freq', '256'], /--nom-freq: value too big: 256/],
    [['--time'], /--time is a ptdump option/],
  ] as const) {
    const r = runCli(['pt-dump', '--raw', '-i', file, ...args]);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, msg);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});

test('--cpu: all models of families 6, 0xf, 0x12, 0x13: errata as in ptdump 2.3 (SKD007, SKZ84, unknown)', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptdump23-cpu-');
  // PSB, an SKD007 pattern (2-byte CYC + OVF opcode), an SKZ84 one (TMA with a reserved bit), PSBEND
  const bytes = new Uint8Array([
    ...Array.from({ length: 8 }, () => [0x02, 0x82]).flat(),
    0x07,
    0x02,
    0xf3,
    0x02,
    0x73,
    0x01,
    0x00,
    0x01,
    0x00,
    0x04,
    0x00,
    0x02,
    0x23,
  ]);
  const file = join(dir, 'errata.pt');
  writeFileSync(file, bytes);
  const cpus = [
    ...Array.from({ length: 256 }, (_v, m) => `6/${m}`),
    ...Array.from({ length: 4 }, (_v, m) => `0x13/${m}/1`),
    ...Array.from({ length: 5 }, (_v, m) => `0x12/${m}`),
    ...Array.from({ length: 256 }, (_v, m) => `0xf/${m}`),
    '5/0x4e',
    '6/0x8e/0xa',
    '6/0x55/',
  ];
  const theirs = runEach(
    tools.ptdump,
    cpus.map((c) => ['--cpu', c, file]),
  );
  let equal = 0;
  cpus.forEach((c, k) => {
    const cpu = parseCpu(c);
    assert.ok(cpu, c);
    const ours = [...ptdumpLines(bytes, { cpu })].map((l) => `${l}\n`).join('');
    assert.equal(ours, theirs[k], `--cpu ${c}`);
    equal++;
  });
  t.diagnostic(`--cpu models equal: ${equal}/${cpus.length}`);
  // both workarounds and the unknown-cpu line occur among them
  assert.ok(theirs.some((o) => / {2}ovf\n/.test(o)) && theirs.some((o) => /<invalid>/.test(o)));
  assert.ok(theirs.some((o) => o.startsWith('[0: failed to determine errata: unknown cpu]')));
});

test('--cpu: malformed values are refused as ptdump refuses them', (t) => {
  const tools = libipt23Tools();
  if ('skip' in tools) return noLibipt23(t, tools.skip);
  const dir = tempDir('ptdump23-cpu-');
  const file = join(dir, 'one.pt');
  writeFileSync(file, new Uint8Array(Array.from({ length: 8 }, () => [0x02, 0x82]).flat()));
  const values = [
    '6',
    '6/',
    '/6',
    '6/x',
    '6/1/x',
    '0x10000/1',
    '6/256',
    '6/1/256',
    '-1/2',
    '6/-1',
    'x/1',
    '6/0x4e/',
    '010/012',
  ];
  const theirs = runEach(
    tools.ptdump,
    values.map((v) => ['--cpu', v, file]),
  );
  values.forEach((v, k) => {
    // ptdump prints nothing on stdout for a refused --cpu (its error goes to stderr)
    const refused = theirs[k] === '';
    assert.equal(parseCpu(v) === null, refused, `--cpu ${v}`);
  });
});
