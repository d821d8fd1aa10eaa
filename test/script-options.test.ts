/**
 * `perfpoke script` against perf 6.1's `perf script`, whole output byte for
 * byte, on recordings made live by `perf record` in this test: perf's
 * options (--ns, -G, --max-stack, --cpu, --pid, --tid, --comms, --time with
 * several ranges and percentages, --header) and perf's errors for bad ones.
 * Also perf's default fields with symbols (kernel from /proc/kallsyms, user
 * code from the mapped ELF files). The command line goes through the real
 * `script` command's option parser.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPerf } from './cli.js';
import { needTool, skipForKernel } from './require-tool.js';
import { tempDir } from './temp-dir.js';
import { firstDiff, scriptInProcess as ours } from './script-compare.js';

const dir = tempDir('perfpoke-script-opts-');
const files = {
  a: join(dir, 'a.data'),
  g: join(dir, 'g.data'),
  t: join(dir, 't.data'),
  u: join(dir, 'u.data'),
  p: join(dir, 'p.data'),
  k: join(dir, 'k.data'),
};
let recordFailure: string | null = null;

before(() => {
  if (runPerf(['--version']) === null) return;
  const rec = (args: string[]): void => {
    const r = runPerf(['record', '-q', ...args]);
    if (r?.status !== 0 && recordFailure === null) recordFailure = `perf record ${args.join(' ')}: ${r?.stderr.trim()}`;
  };
  rec(['-o', files.a, '-e', 'cpu-clock', '-F', '999', '-a', '--', 'sleep', '0.3']);
  rec([
    '-o',
    files.g,
    '-e',
    'cpu-clock',
    '-F',
    '999',
    '-g',
    '--',
    'dd',
    'if=/dev/zero',
    'of=/dev/null',
    'count=100000',
  ]);
  // a task that wakes every 10 ms: switches spread over the whole recording, so time windows hold some
  const naps = 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 0.01; done';
  rec(['-o', files.t, '-e', 'sched:sched_switch', '-a', '--', 'sh', '-c', naps]);
  // tracepoints with callchains: perf adds ip, sym+off and dso to their default fields
  rec(['-o', files.k, '-e', 'sched:sched_switch', '-e', 'cpu-clock', '-g', '--', 'sh', '-c', naps]);
  rec(['-o', files.u, '-e', 'cpu-clock', '-F', '999', '--', 'dd', 'if=/dev/zero', 'of=/dev/null', 'count=300000']);
  // pipe mode (perf record -o -): no HEADER_BUILD_ID before the samples, perf takes the kernel as this host's
  const dd = ['dd', 'if=/dev/zero', 'of=/dev/null', 'count=100000'];
  const pipe = spawnSync(
    '/usr/bin/perf',
    ['record', '-q', '-o', '-', '-e', 'cpu-clock', '-F', '999', '-g', '--', ...dd],
    {
      maxBuffer: 1 << 30,
    },
  );
  if (pipe.status === 0) writeFileSync(files.p, pipe.stdout);
  else recordFailure ??= `perf record -o -: ${pipe.stderr?.toString().trim()}`;
});

const SAMPLE = 'comm,tid,pid,cpu,time,period,event,ip';
const CHAIN = 'comm,tid,pid,time,period,event,ip';
const TP = 'comm,tid,pid,cpu,time,event';

/** [file, args]: every case must give perf's stdout byte for byte (or perf's error line). */
const CASES: [keyof typeof files, string[]][] = [
  ['a', ['-F', SAMPLE, '--ns']],
  ['a', ['-F', SAMPLE, '--ns', '--show-task-events', '--show-mmap-events']],
  ['a', ['-F', SAMPLE, '--cpu', '1', '--show-task-events', '--show-mmap-events', '--show-lost-events']],
  ['a', ['-F', SAMPLE, '-C', '0-1']],
  ['a', ['-F', SAMPLE, '--pid', 'PID1,PID2', '--show-task-events']],
  ['a', ['-F', SAMPLE, '--tid', 'PID1']],
  ['a', ['-F', SAMPLE, '--comms', 'COMM1,COMM2']],
  ['a', ['-F', SAMPLE, '--comms', 'COMM1,COMM1']],
  ['a', ['-F', SAMPLE, '--pid', 'PID1,PID1']],
  ['a', ['-F', SAMPLE, '--time', 'T1,T2']],
  ['a', ['-F', SAMPLE, '--time', 'T1,T2 T3,T4']],
  ['a', ['-F', SAMPLE, '--time', 'T1,']],
  ['a', ['-F', SAMPLE, '--time', ',T2']],
  ['a', ['-F', SAMPLE, '--time', '10%/2']],
  ['a', ['-F', SAMPLE, '--time', '10%/1,10%/3']],
  ['a', ['-F', SAMPLE, '--time', '0%-10%,30%-40%']],
  ['a', ['-F', SAMPLE, '--time', '25%']],
  ['a', ['-F', SAMPLE, '--header']],
  ['a', ['-F', SAMPLE, '--header-only']],
  ['a', ['-F', SAMPLE, '--time', '5']],
  ['a', ['-F', SAMPLE, '--cpu', '64']],
  ['a', ['-F', SAMPLE, '--cpu', 'x']],
  ['a', ['-F', '+pid,-sym,-symoff,-dso']],
  ['a', ['-F', '-cpu,-period,-sym,-dso,-symoff', '--ns']],
  ['a', ['-F', 'sw:comm,ip']],
  ['a', ['-F', 'trace:comm,cpu', '-F', 'sw:tid,time']],
  ['a', ['-F', 'comm', '-F', 'tid']],
  ['a', ['-F', 'sw:']],
  ['a', ['-F', 'comm,+pid']],
  ['a', ['-F', 'nosuch']],
  ['a', ['-F', 'xx:comm']],
  ['a', ['-F', 'sw:trace']],
  ['t', ['-F', '-trace']],
  ['t', ['-F', 'trace:comm,tid,cpu', '--show-switch-events']],
  // symbols: perf's default fields (sym, symoff, dso), kernel from /proc/kallsyms, user code from ELF files
  ['u', []],
  ['u', ['-G', '--ns']],
  ['u', ['-F', '+pid,-period']],
  ['u', ['-F', 'comm,tid,ip,sym,dso']],
  ['u', ['-F', 'ip,dso', '--show-mmap-events']],
  ['u', ['-F', 'ip,symoff']],
  ['g', []],
  ['g', ['-G']],
  ['g', ['-F', 'ip,sym,dso', '--max-stack', '2']],
  ['g', ['-F', CHAIN, '-G']],
  ['p', []],
  ['p', ['-G', '-F', '+pid', '--ns']],
  ['g', ['-F', CHAIN, '--hide-call-graph', '--show-task-events']],
  ['g', ['-F', CHAIN, '--max-stack', '0']],
  ['g', ['-F', CHAIN, '--max-stack', '2', '--ns']],
  ['g', ['-F', CHAIN, '--cpu', '0']],
  ['t', ['-F', TP, '--cpu', '0', '--show-switch-events']],
  ['t', ['-F', TP, '--ns', '--comms', 'COMM1', '--time', '20%-60%']],
  ['k', []],
  ['k', ['-G']],
  ['k', ['--max-stack', '2', '--ns']],
  ['k', ['-F', '+pid']],
];

/** Values that exist in this recording: the two busiest processes and a time window inside it. */
function placeholders(perfOut: string): Record<string, string> {
  const counts = new Map<string, { n: number; comm: string }>();
  const times: string[] = [];
  for (const l of perfOut.split('\n')) {
    const m = /^\s*(\S.*?)\s+(\d+)\/\d+\s+\[\d+\]\s+(\d+\.\d+):/.exec(l);
    if (!m) continue;
    const c = counts.get(m[2]!) ?? { n: 0, comm: m[1]! };
    c.n++;
    counts.set(m[2]!, c);
    times.push(m[3]!);
  }
  const top = [...counts.entries()].sort((x, y) => y[1].n - x[1].n);
  const t = (f: number): string => times[Math.floor(times.length * f)] ?? '0.0';
  return {
    PID1: top[0]?.[0] ?? '1',
    PID2: top[1]?.[0] ?? '1',
    COMM1: top[0]?.[1].comm ?? 'x',
    COMM2: top.find(([, c]) => c.comm !== top[0]?.[1].comm)?.[1].comm ?? 'x',
    T1: t(0.2),
    T2: t(0.3),
    T3: t(0.6),
    T4: t(0.7),
  };
}

for (const [key, rawArgs] of CASES) {
  test(`script ${rawArgs.join(' ')} equals perf script on a live ${key}.data`, async (t) => {
    if (!needTool(t, 'perf')) return;
    if (!skipForKernel(t, recordFailure)) return;
    const file = files[key];
    const base = runPerf([
      'script',
      '-i',
      file,
      '-F',
      key === 'g' || key === 'u' || key === 'p' || key === 'k' ? CHAIN : key === 't' ? TP : SAMPLE,
    ])!;
    const ph = placeholders(base.stdout);
    const args = rawArgs.map((a) => a.replace(/PID1|PID2|COMM1|COMM2|T1|T2|T3|T4/g, (k) => ph[k]!));
    const perf = runPerf(['script', '-i', file, ...args])!;
    const mine = await ours(file, args);
    // a list with a repeated entry: perf prints its error and nothing else, but exits 0
    if (perf.status !== 0 || (perf.stdout === '' && perf.stderr.startsWith('problems parsing'))) {
      const perfErr = perf.stderr.trim().split('\n')[0]!;
      assert.equal(mine.err?.replace(/^--time: /, ''), perfErr, `perf failed with "${perfErr}"`);
      return;
    }
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    // a filter may select nothing on a quiet machine: then both must print nothing (compared below)
    const filtered = ['--cpu', '--comms', '--time', '--pid', '--tid', 'sw:'].some((f) => args.includes(f));
    if (perf.stdout.length === 0 && filtered) t.diagnostic(`perf printed nothing for ${args.join(' ')}`);
    else assert.ok(perf.stdout.length > 0, `perf printed something to compare: ${args.join(' ')}`);
    const theirs = perf.stdout;
    assert.equal(firstDiff(mine.out, theirs), 'equal');
    assert.equal(mine.out, theirs);
  });
}
