/**
 * Tracepoint payloads (`perf script`'s `trace` field) against perf 6.1, whole
 * output byte for byte, on recordings made live here by `perf record` of a
 * workload this test controls (dd, sleeps, cat): sched, irq, kmem, syscalls,
 * timer and workqueue events, with perf's default fields and several `-F`
 * forms. Also: a print fmt we cannot print is refused naming the event.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runPerf } from './cli.js';
import { needTool, skipForKernel } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { parseFields, runScript, StringSink, type ScriptOptions } from '../src/cli/commands/script.js';
import { parseEventFormat } from '../src/perfdata/tracing/event-format.js';
import { TracePayloads } from '../src/format/trace-payload.js';
import { formatScript } from '../src/format/perf-script.js';
import { formatInt, parseConv } from '../src/format/c-printf.js';
import type { SampleRecord } from '../src/perfdata/index.js';

const dir = tempDir('perfpoke-script-trace-');
const file = join(dir, 'tp.data');
const pipeFile = join(dir, 'tp-pipe.data');
let recordFailure: string | null = null;

const EVENTS = [
  ...['sched:*', 'irq:*', 'kmem:kmalloc', 'kmem:kfree', 'kmem:kmem_cache_alloc', 'kmem:kmem_cache_free'],
  ...['syscalls:sys_enter_openat', 'syscalls:sys_exit_openat', 'syscalls:sys_enter_write', 'syscalls:sys_exit_write'],
  ...['timer:*', 'workqueue:*'],
].flatMap((e) => ['-e', e]);

before(() => {
  if (runPerf(['--version']) === null) return;
  // writes with fsync (block and workqueue activity), short sleeps (timers, switches), a fork per command
  const work = [
    `dd if=/dev/zero of=${join(dir, 'x')} bs=4k count=200 conv=fsync 2>/dev/null`,
    'for i in 1 2 3 4 5; do sleep 0.01; done',
    'cat /etc/hostname > /dev/null',
  ].join('; ');
  const r = runPerf(['record', '-q', '-o', file, ...EVENTS, '--', 'sh', '-c', work]);
  if (r?.status !== 0) recordFailure = `perf record: ${r?.stderr.trim()}`;
  const pipe = spawnSync('/usr/bin/perf', ['record', '-q', '-o', '-', ...EVENTS, '--', 'sh', '-c', work], {
    maxBuffer: 1 << 30,
  });
  if (pipe.status === 0) writeFileSync(pipeFile, pipe.stdout);
  else recordFailure ??= `perf record -o -: ${pipe.stderr?.toString().trim()}`;
});

async function ours(input: string, fields: string[]): Promise<{ out: string; err?: string }> {
  const sink = new StringSink();
  try {
    await runScript(input, { fieldSpecs: fields, quiet: true }, sink);
    return { out: sink.text };
  } catch (e) {
    return { out: sink.text, err: (e as Error).message };
  }
}

function firstDiff(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `line ${i + 1}:\n  ours: ${JSON.stringify(x[i])}\n  perf: ${JSON.stringify(y[i])}`;
  return 'equal';
}

/** The tracepoint kinds ("sys:name") printed in perf's default output. */
function eventKinds(out: string): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const l of out.split('\n')) {
    const m = /\s([a-z_0-9]+:[a-z_0-9]+): /.exec(l);
    if (m) kinds.set(m[1]!, (kinds.get(m[1]!) ?? 0) + 1);
  }
  return kinds;
}

const CASES: string[][] = [
  [],
  ['-F', 'trace'],
  ['-F', 'comm,tid,time,trace'],
  ['-F', '+pid,+period'],
  ['-F', '-event'],
  ['-F', 'trace:time,event,trace', '-F', 'sw:comm'],
  ['-F', 'tid,cpu,event,trace'],
];

for (const args of CASES) {
  test(`script ${args.join(' ') || '(default fields)'} equals perf script on live tracepoints`, async (t) => {
    if (!needTool(t, 'perf')) return;
    if (!skipForKernel(t, recordFailure)) return;
    const perf = runPerf(['script', '-i', file, ...args])!;
    assert.equal(perf.status, 0, perf.stderr);
    const mine = await ours(
      file,
      args.filter((_, i) => args[i - 1] === '-F'),
    );
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    assert.equal(firstDiff(mine.out, perf.stdout), 'equal');
    const kinds = eventKinds(perf.stdout);
    if (args.length === 0) {
      const lines = perf.stdout.split('\n').length - 1;
      t.diagnostic(`${kinds.size} tracepoint kinds, ${lines} lines equal: ${[...kinds.keys()].sort().join(' ')}`);
      // the workload gives at least sched, syscalls, kmem and timer events
      for (const sys of ['sched:', 'syscalls:', 'kmem:', 'timer:'])
        assert.ok(
          [...kinds.keys()].some((k) => k.startsWith(sys)),
          `no ${sys} event recorded`,
        );
    }
  });
}

test('script on a live pipe-mode tracepoint recording equals perf script -i -', async (t) => {
  if (!needTool(t, 'perf')) return;
  if (!skipForKernel(t, recordFailure)) return;
  // perf 6.1 reads such a pipe file only from a pipe ("unexpected end of event stream" from a regular file)
  const perf = spawnSync('/bin/sh', ['-c', `cat "${pipeFile}" | /usr/bin/perf script -i -`], { maxBuffer: 1 << 30 });
  assert.equal(perf.status, 0, perf.stderr.toString());
  const mine = await ours(pipeFile, []);
  assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
  assert.equal(firstDiff(mine.out, perf.stdout.toString()), 'equal');
});

for (const fx of ['tp.data', 'pipe-tp.data']) {
  test(`script with perf's default fields equals perf script on the recorded fixture ${fx}`, async (t) => {
    if (!needTool(t, 'perf')) return;
    const path = join(repoRoot, 'test', 'fixtures', 'recorded', fx);
    // the pipe-mode file is read by perf 6.1 from a pipe only
    const cmd = fx.startsWith('pipe')
      ? `cat "${path}" | /usr/bin/perf script -i -`
      : `/usr/bin/perf script -i "${path}"`;
    const perf = spawnSync('/bin/sh', ['-c', cmd], { maxBuffer: 1 << 30 });
    assert.equal(perf.status, 0, perf.stderr.toString());
    assert.ok(perf.stdout.length > 0, 'perf printed nothing');
    const mine = await ours(path, []);
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    assert.equal(firstDiff(mine.out, perf.stdout.toString()), 'equal');
  });
}

test('-F trace is one of the fields perfpoke prints', () => {
  assert.deepEqual(parseFields('comm,trace'), ['comm', 'trace']);
});

test('a print fmt perfpoke cannot print is refused naming the event, never printed differently', () => {
  const fmt = [
    'name: odd_event',
    'ID: 7',
    'format:',
    '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
    '',
    '\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;',
    '',
    'print fmt: "x=%s", __print_array(REC->x, 1, 4)',
  ].join('\n');
  const ev = parseEventFormat(fmt, 'test');
  assert.ok(ev);
  const td = { version: '0.6', bigEndian: false, longSize: 8, pageSize: 4096, events: new Map([[7, ev]]) };
  const p = new TracePayloads(td, () => undefined);
  assert.throws(() => p.text(7, new Uint8Array(12)), /'test:odd_event' is not supported yet \(__print_array\(\)\)/);
});

test('formatScript prints a tracepoint payload given the formats, and refuses without them', () => {
  const fmt = [
    'name: tiny',
    'ID: 9',
    'format:',
    '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
    '',
    '\tfield:char comm[4];\toffset:8;\tsize:4;\tsigned:0;',
    '\tfield:int v;\toffset:12;\tsize:4;\tsigned:1;',
    '',
    'print fmt: "comm=%s v=%d hex=%#06x", REC->comm, REC->v, REC->v',
  ].join('\n');
  const ev = parseEventFormat(fmt, 'test')!;
  const td = { version: '0.6', bigEndian: false, longSize: 8, pageSize: 4096, events: new Map([[9, ev]]) };
  const raw = new Uint8Array(16);
  raw.set([0x61, 0x62, 0x63, 0], 8);
  new DataView(raw.buffer).setInt32(12, -42, true);
  const sample = { kind: 'sample', type: 9, misc: 0, size: 0, fileOffset: 0, raw } as unknown as SampleRecord;
  const opts = { attrType: 2, fields: ['event', 'trace'] as ScriptOptions['fields'], event: 'test:tiny' };
  assert.equal(
    formatScript(sample, { ...opts, tracingData: td, config: 9n }),
    'test:tiny: comm=abc v=-42 hex=0xffffffd6\n',
  );
  assert.throws(() => formatScript(sample, opts), /-F trace: pass tracingData/);
});

test('integer conversions print as printf(1) prints them (glibc)', () => {
  const specs = ['%d', '%5d', '%-5d', '%05d', '%x', '%#x', '%08lx', '%.3d', '%lu', '%lld', '%X', '%#o', '%+d'];
  const values = [0n, 1n, -1n, 42n, -42n, 123456789n];
  for (const spec of specs) {
    for (const v of values) {
      const bits = /l/.test(spec) ? 64 : 32;
      // printf(1) takes intmax_t: give it the value the C argument holds
      const c = spec.endsWith('d') ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
      const ref = spawnSync('/usr/bin/printf', [spec.replace(/l+/, ''), c.toString()], { encoding: 'utf8' }).stdout;
      assert.equal(formatInt(parseConv(spec), v, bits), ref, `${spec} of ${v}`);
    }
  }
});
