/**
 * The kernel map after perf loads kallsyms (symbol.c dso__load_kernel_sym:
 * map__fixup_start/map__fixup_end): frames in init text above _etext
 * (start_kernel, x86_64_start_kernel, __pfx_clear_bss on the boot CPU's idle
 * task) are named although the kernel MMAP ends at _etext. Compared with
 * perf 6.1 byte for byte:
 * - on a live `perf record -g` of dd whose later kernel callchains are edited
 *   (convert to JSON lines and back) to hold init-text addresses and one past
 *   the last kernel symbol: the same every run;
 * - on a live `perf record -a -g -e sched:sched_switch` whose workload sleeps
 *   on CPU 0, so that CPU 0's idle task (swapper, started by start_kernel)
 *   may switch; the comparison keeps the swapper lines (--comms swapper):
 *   kernel frames only, whatever else runs (a machine whose CPU 0 never
 *   idles gives none: both print nothing, said in a diagnostic).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonlToPerfData, perfDataToJsonl } from '../src/perfdata/jsonl.js';
import { runPerf } from './cli.js';
import { needTool, skipForKernel } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { scriptInProcess } from './script-compare.js';

const dir = tempDir('perfpoke-script-kmap-');
const file = join(dir, 's.data');
const edited = join(dir, 'e.data');
let recordFailure: string | null = null;
let editFailure: string | null = null;

/** Addresses of kallsyms names on this host (the dd recording's kernel is this host's). */
function kallsym(name: string): bigint | undefined {
  const m = new RegExp(`^([0-9a-f]+) \\S+ ${name}$`, 'm').exec(readFileSync('/proc/kallsyms', 'utf8'));
  return m ? BigInt(`0x${m[1]}`) : undefined;
}

/** A dd recording whose kernel callchains from the 5th sample on run through init text and past the last symbol. */
async function makeEdited(): Promise<void> {
  const g = join(dir, 'g.data');
  const r = runPerf(['record', '-q', '-g', '-o', g, '--', 'dd', 'if=/dev/zero', 'of=/dev/null', 'count=20000']);
  if (r?.status !== 0) throw new Error(`perf record -g: ${r?.stderr.trim()}`);
  const sk = kallsym('start_kernel');
  const xk = kallsym('x86_64_start_kernel');
  const ends = readFileSync('/proc/kallsyms', 'utf8')
    .split('\n')
    .filter((l) => / [TtWwDdBb] /.test(l) && !l.includes('['))
    .map((l) => BigInt(`0x${l.slice(0, l.indexOf(' '))}`));
  let last = 0n;
  for (const e of ends) if (e > last) last = e;
  if (sk === undefined || xk === undefined) throw new Error('no start_kernel in /proc/kallsyms');
  const hex = (v: bigint): string => `0x${v.toString(16)}`;
  const extra = [hex(sk + 0x10n), hex(xk + 0x21n), hex(last + 0x2000n), hex(last + 0x100000n)];
  const jl = join(dir, 'g.jsonl');
  await perfDataToJsonl(g, jl);
  let kernelSamples = 0;
  const lines = readFileSync(jl, 'utf8')
    .split('\n')
    .map((l) => {
      if (!l.startsWith('{"kind":"sample"')) return l;
      const o = JSON.parse(l) as { callchain?: string[] };
      const c = o.callchain ?? [];
      if (c[0] !== '0xffffffffffffff80' || ++kernelSamples < 5) return l;
      const user = c.indexOf('0xfffffffffffffe00');
      c.splice(user < 0 ? c.length : user, 0, ...extra);
      return JSON.stringify(o);
    });
  if (kernelSamples < 6) throw new Error(`only ${kernelSamples} samples with kernel callchains`);
  writeFileSync(jl, lines.join('\n'));
  await jsonlToPerfData(jl, edited);
}

/** Our script in-process, on the live recording unless told otherwise. */
const ours = (args: string[], input = file) => scriptInProcess(input, args);

before(async () => {
  if (runPerf(['--version']) === null) return;
  try {
    await makeEdited();
  } catch (e) {
    editFailure = (e as Error).message;
  }
  const naps = 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 0.01; done';
  const r = runPerf(
    ['record', '-q', '-a', '-g', '-e', 'sched:sched_switch', '-o', file, '--'].concat([
      'taskset',
      '-c',
      '0',
      'sh',
      '-c',
      naps,
    ]),
  );
  if (r?.status !== 0) recordFailure = `perf record -a -g: ${r?.stderr.trim()}`;
});

const CASES: string[][] = [
  ['--comms', 'swapper', '-F', '-trace'],
  ['--comms', 'swapper', '-F', 'comm,tid,cpu,time,event,ip,sym,dso', '--ns'],
  ['--comms', 'swapper', '-F', 'ip,sym,symoff', '--max-stack', '6'],
];

for (const args of CASES) {
  test(`script ${args.join(' ')} names init-text frames as perf does (live -a -g)`, async (t) => {
    if (!needTool(t, 'perf')) return;
    if (!skipForKernel(t, recordFailure)) return;
    const perf = runPerf(['script', '-i', file, ...args])!;
    assert.equal(perf.status, 0, perf.stderr);
    if (perf.stdout === '') t.diagnostic('CPU 0 never idled while recording: no swapper lines to compare');
    else if (!/start_kernel/.test(perf.stdout)) t.diagnostic('no boot-CPU idle frames in this recording');
    const mine = await ours(args);
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    const a = mine.out.split('\n');
    const b = perf.stdout.split('\n');
    const i = b.findIndex((l, k) => a[k] !== l);
    assert.equal(i < 0 ? 'equal' : `line ${i + 1}: ours ${a[i]} perf ${b[i]}`, 'equal');
    assert.equal(mine.out, perf.stdout);
  });
}

const EDITED_CASES: string[][] = [[], ['-F', 'comm,tid,ip,sym,symoff,dso'], ['-F', 'ip,dso', '--max-stack', '20']];

for (const args of EDITED_CASES) {
  test(`script ${args.join(' ')} names init-text frames as perf does (edited -g recording)`, async (t) => {
    if (!needTool(t, 'perf')) return;
    assert.equal(editFailure, null, `could not make the recording: ${editFailure}`);
    const perf = runPerf(['script', '-i', edited, ...args])!;
    assert.equal(perf.status, 0, perf.stderr);
    assert.match(perf.stdout, /x86_64_start_kernel|\(\[kernel\.kallsyms\]\)/, 'perf printed the edited frames');
    const mine = await ours(args, edited);
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    const a = mine.out.split('\n');
    const b = perf.stdout.split('\n');
    const i = b.findIndex((l, k) => a[k] !== l);
    assert.equal(i < 0 ? 'equal' : `line ${i + 1}: ours ${a[i]} perf ${b[i]}`, 'equal');
    assert.equal(mine.out, perf.stdout);
  });
}
