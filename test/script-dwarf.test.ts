/**
 * `perfpoke script` on `perf record --call-graph dwarf` recordings against
 * perf 6.1's `perf script`, whole output byte for byte: user frames unwound
 * from the sample's registers and stack copy with the mapped files' CFI
 * (src/machine/dwarf-unwind.ts), inlined functions named as perf names them
 * (addr2line), kernel frames from the callchain. Recorded live here: a C
 * program compiled by gcc (recursion through qsort, libc and ld.so frames)
 * and gzip, each started directly by perf; a C program whose samples land in
 * a signal handler (frames through __restore_rt); and `sh -c 'seq | sort'`,
 * whose children keep the shell's maps after exec, so perf's .eh_frame
 * search may take the shell's load base for ld.so and libc and fall back to
 * libunwind's frame-pointer heuristics.
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

const dir = tempDir('perfpoke-script-dwarf-');
const files = { c: join(dir, 'c.data'), z: join(dir, 'z.data'), sig: join(dir, 'sig.data'), sh: join(dir, 'sh.data') };
let recordFailure: string | null = null;
let gccFailure: string | null = null;

const PROGRAM = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static volatile long sink;
__attribute__((noinline)) long leaf(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * i; return s; }
__attribute__((noinline)) long mid(long n) { return leaf(n) + 1; }
__attribute__((noinline)) long top(long n) { char b[64]; memset(b, 1, sizeof b); return mid(n) + b[3]; }
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
  for (int k = 0; k < 60; k++) {
    int a[2000];
    sink += top(200000);
    for (int i = 0; i < 2000; i++) a[i] = rand();
    qsort(a, 2000, sizeof(int), cmp);
  }
  printf("%ld\\n", sink);
  return 0;
}
`;

// samples in a SIGPROF handler: the handler's callers are __restore_rt and the interrupted loop
const SIGNAL_PROGRAM = `
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
static volatile long sink;
__attribute__((noinline)) static void work(long n) { for (long i = 0; i < n; i++) sink += i ^ (i >> 3); }
static void on_prof(int sig) { (void)sig; work(300000); }
__attribute__((noinline)) static void loop(void) { for (long i = 0; i < 400000000L && sink >= 0; i++) sink += i & 1; }
int main(void) {
  struct sigaction sa = { 0 };
  sa.sa_handler = on_prof;
  sigaction(SIGPROF, &sa, 0);
  struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
  setitimer(ITIMER_PROF, &it, 0);
  loop();
  printf("%ld\\n", sink);
  return 0;
}
`;

before(() => {
  if (runPerf(['--version']) === null) return;
  const rec = (out: string, cmd: string[]): void => {
    const r = runPerf(['record', '-q', '--call-graph', 'dwarf', '-F', '999', '-o', out, '--', ...cmd]);
    if (r?.status !== 0 && recordFailure === null) recordFailure = `perf record ${cmd.join(' ')}: ${r?.stderr.trim()}`;
  };
  const src = join(dir, 'w.c');
  writeFileSync(src, PROGRAM);
  const gcc = spawnSync('gcc', ['-O2', '-o', join(dir, 'w'), src], { encoding: 'utf8' });
  if (gcc.status === 0) rec(files.c, [join(dir, 'w')]);
  else gccFailure = `gcc failed: ${gcc.stderr ?? gcc.error}`;
  const sigSrc = join(dir, 's.c');
  writeFileSync(sigSrc, SIGNAL_PROGRAM);
  const gccSig = spawnSync('gcc', ['-O2', '-o', join(dir, 's'), sigSrc], { encoding: 'utf8' });
  if (gccSig.status === 0) rec(files.sig, [join(dir, 's')]);
  else gccFailure ??= `gcc failed: ${gccSig.stderr ?? gccSig.error}`;
  rec(files.sh, ['sh', '-c', 'seq 1 200000 | sort -R > /dev/null']);
  const input = join(dir, 'rnd');
  writeFileSync(input, Buffer.from(Array.from({ length: 1 << 21 }, (_, i) => (i * 2654435761) >>> 24)));
  rec(files.z, ['gzip', '-c', '-k', '-f', input]);
});

const CASES: [keyof typeof files, string[]][] = [
  ['c', []],
  ['c', ['-G']],
  ['c', ['-F', 'comm,tid,time,ip,sym,dso', '--max-stack', '3']],
  ['c', ['-F', 'ip,sym,symoff', '--ns']],
  ['c', ['-F', 'ip']],
  ['c', ['--max-stack', '1']],
  ['z', []],
  ['z', ['-F', 'comm,tid,pid,time,period,event,ip,sym']],
  ['sig', []],
  ['sh', []],
  ['sh', ['-F', 'comm,pid,ip,sym,dso', '--max-stack', '4']],
];

for (const [key, args] of CASES) {
  test(`script ${args.join(' ')} equals perf script on a live --call-graph dwarf ${key}.data`, async (t) => {
    if (!needTool(t, 'perf')) return;
    if ((key === 'c' || key === 'sig') && !needTool(t, 'gcc')) return;
    if ((key === 'c' || key === 'sig') && gccFailure) assert.fail(gccFailure);
    if (!skipForKernel(t, recordFailure)) return;
    const file = files[key];
    const perf = runPerf(['script', '-i', file, ...args])!;
    assert.equal(perf.status, 0, perf.stderr);
    assert.ok(perf.stdout.length > 0, 'perf printed something to compare');
    const mine = await ours(file, args);
    assert.equal(mine.err, undefined, `we failed: ${mine.err}`);
    const theirs = perf.stdout;
    const lines = theirs.split('\n');
    const mineLines = mine.out.split('\n');
    const equal = lines.filter((l, i) => mineLines[i] === l).length;
    t.diagnostic(`${equal}/${lines.length} lines equal`);
    assert.equal(firstDiff(mine.out, theirs), 'equal');
    assert.equal(mine.out, theirs);
  });
}
