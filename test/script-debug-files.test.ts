/**
 * Symbols from separate debug files, found where perf 6.1 looks for them
 * (src/machine/symbol-sources.ts): a stripped program whose .symtab lives in
 * `.debug/NAME.debug` named by its `.gnu_debuglink`, and libc's, which
 * Debian's libc6-dbg installs as `/usr/lib/debug/.build-id/xx/….debug`.
 * Both are recorded here with perf and printed by both tools; before the
 * lookup, libc's internal functions printed as `[unknown]` or by their
 * exported alias (`fstatat64` for perf's `__GI___fstatat64`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readElfSymbols } from '../src/machine/elf-symbols.js';
import { runPerf } from './cli.js';
import { cannotCompare, needTool } from './require-tool.js';
import { firstDiff, scriptInProcess } from './script-compare.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('perfpoke-debug-files-');

function sh(cmd: string, args: string[], cwd = dir): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
}

/** perf record (no build-id cache writes), then both tools' default output. */
async function recordAndCompare(name: string, workload: string[]): Promise<string> {
  const data = join(dir, `${name}.data`);
  const rec = runPerf(['record', '-q', '-N', '-e', 'cpu-clock', '-c', '20000', '-o', data, '--', ...workload], {
    cwd: dir,
  });
  assert.ok(rec && rec.status === 0, `perf record: ${rec?.stderr}`);
  const perf = runPerf(['script', '-i', data], { cwd: dir });
  assert.ok(perf && perf.status === 0, `perf script: ${perf?.stderr}`);
  const cwd = process.cwd();
  process.chdir(dir); // perf looks up a debuglink name relative to its working directory first
  try {
    const ours = await scriptInProcess(data, []);
    assert.equal(ours.err, undefined);
    assert.equal(firstDiff(ours.out, perf.stdout), 'equal');
  } finally {
    process.chdir(cwd);
  }
  return perf.stdout;
}

test('a stripped program: symbols from the file its .gnu_debuglink names, in .debug/ beside it', async (t) => {
  if (!needTool(t, 'perf') || !needTool(t, 'gcc') || !needTool(t, 'objdump')) return;
  writeFileSync(
    join(dir, 'spin.c'),
    `static volatile unsigned long sink;
static __attribute__((noinline)) void hidden_spin(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }
int main(void) { hidden_spin(300000000UL); return 0; }
`,
  );
  sh('gcc', ['-O1', '-g', '-Wl,--build-id', '-o', 'spin', 'spin.c']);
  mkdirSync(join(dir, '.debug'));
  sh('objcopy', ['--only-keep-debug', 'spin', '.debug/spin.debug']);
  sh('objcopy', ['--strip-all', 'spin']);
  sh('objcopy', ['--add-gnu-debuglink=.debug/spin.debug', 'spin']);
  const out = await recordAndCompare('spin', ['./spin']);
  assert.match(out, /hidden_spin\+0x/, 'the static function is named: its symbol is only in the debug file');
});

test("libc's internal symbols from /usr/lib/debug/.build-id (libc6-dbg), as perf prints them", async (t) => {
  if (!needTool(t, 'perf')) return;
  const libc = '/usr/lib/x86_64-linux-gnu/libc.so.6';
  const bid = existsSync(libc) ? readElfSymbols(new Uint8Array(readFileSync(libc)))?.buildId : undefined;
  const debug = bid && `/usr/lib/debug/.build-id/${bid.slice(0, 2)}/${bid.slice(2)}.debug`;
  if (!debug || !existsSync(debug))
    return cannotCompare(t, `no debug file for ${libc} (apt-get install libc6-dbg): ${debug ?? 'no build-id'}`);
  // directory walks spend their time in libc's stat and getdents wrappers
  const out = await recordAndCompare('find', [
    'sh',
    '-c',
    'for i in 1 2 3; do find /usr/lib /usr/share > /dev/null; done',
  ]);
  assert.match(out, /__GI_|_IO_|__libc_/, "libc's internal names (only in its debug file) are printed");
});
