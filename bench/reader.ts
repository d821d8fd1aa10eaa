/**
 * Reader benchmark: perfpoke stats / script against perf report --stats /
 * perf script on the same ≥ 300 MB genuine recording, same run.
 *
 * The recording is made once (bench/out/big.data, reused while ≥ 300 MB):
 *   perf record -a -g -d -B -e cpu-clock -c 50000 -- <two busy shell loops>
 * (-d adds ADDR so `-F …,addr` is valid; -B skips perf's build-id pass.)
 *
 * Each tool runs as its own process under /usr/bin/time (wall seconds, peak
 * RSS), stdout to /dev/null. perfpoke runs as `node --import tsx bench/reader.ts
 * --child <stats|script> FILE`: the library call the CLI makes, in a fresh
 * node (TypeScript transpiled on the fly, so its start-up is included), without
 * loading every other command module the CLI registers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const outDir = join(here, 'out');
const big = join(outDir, 'big.data');
const MIN_BYTES = 300e6;
const FIELDS = 'comm,tid,pid,cpu,time,period,event,ip,addr';

function record(seconds: number): number {
  const tmp = `${big}.tmp-${process.pid}`;
  const busy = `end=$(($(date +%s)+${seconds})); (while [ $(date +%s) -lt $end ]; do :; done) & while [ $(date +%s) -lt $end ]; do :; done; wait`;
  const r = spawnSync('/usr/bin/perf', ['record', '-q', '-a', '-g', '-d', '-B', '-e', 'cpu-clock', '-c', '50000', '-o', tmp, '--', 'sh', '-c', busy], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0 || !existsSync(tmp)) {
    rmSync(tmp, { force: true });
    throw new Error(`perf record failed: ${r.stderr?.toString()}`);
  }
  renameSync(tmp, big);
  return statSync(big).size;
}

/** Make (or reuse) the ≥ 300 MB recording. */
function ensureRecording(): number {
  mkdirSync(outDir, { recursive: true });
  if (existsSync(big) && statSync(big).size >= MIN_BYTES) return statSync(big).size;
  let seconds = 45;
  for (let i = 0; i < 3; i++) {
    console.log(`reader: recording ${seconds} s of busy loops with perf record -a -g (once)…`);
    const size = record(seconds);
    if (size >= MIN_BYTES) return size;
    seconds = Math.ceil(seconds * (MIN_BYTES / size) * 1.15);
  }
  throw new Error('could not make a ≥ 300 MB recording');
}

interface Run {
  seconds: number;
  maxRssMB: number;
  /** The child's own figure (perfpoke only): time inside the library call. */
  inner?: number;
}

/** Run a command with stdout to /dev/null under /usr/bin/time. */
function timed(cmd: string, args: string[]): Run {
  const devnull = openSync('/dev/null', 'w');
  try {
    const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %M', cmd, ...args], { cwd: root, stdio: ['ignore', devnull, 'pipe'], maxBuffer: 1 << 26 });
    const err = r.stderr.toString();
    const m = /TIME ([\d.]+) (\d+)\s*$/.exec(err);
    if (r.status !== 0 || !m) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${err.slice(-500)}`);
    const inner = /INNER ([\d.]+)/.exec(err);
    return { seconds: Number(m[1]), maxRssMB: Number(m[2]) / 1024, inner: inner ? Number(inner[1]) : undefined };
  } finally {
    closeSync(devnull);
  }
}

const ours = (what: 'stats' | 'script'): Run => timed(process.execPath, ['--import', 'tsx', join(here, 'reader.ts'), '--child', what, big]);

export async function run(): Promise<void> {
  if (spawnSync('/usr/bin/perf', ['--version']).status !== 0) {
    console.log('reader: skipped (perf not installed)');
    return;
  }
  const size = ensureRecording();
  console.log(`reader: ${big}: ${(size / 1e6).toFixed(0)} MB`);

  const perfStats = timed('/usr/bin/perf', ['report', '--stats', '-i', big]);
  const ourStats = ours('stats');
  console.log(
    `reader: stats   perf ${perfStats.seconds.toFixed(2)} s (${perfStats.maxRssMB.toFixed(0)} MB) | perfpoke ${ourStats.seconds.toFixed(2)} s ` +
      `(library ${ourStats.inner?.toFixed(2)} s), peak RSS ${ourStats.maxRssMB.toFixed(0)} MB | speed ratio perf/perfpoke ${(perfStats.seconds / ourStats.seconds).toFixed(2)}x ` +
      `(library only ${(perfStats.seconds / (ourStats.inner ?? ourStats.seconds)).toFixed(2)}x)`,
  );

  const perfScript = timed('/usr/bin/perf', ['script', '-i', big, '-F', FIELDS]);
  const ourScript = ours('script');
  console.log(
    `reader: script  perf ${perfScript.seconds.toFixed(2)} s (${perfScript.maxRssMB.toFixed(0)} MB) | perfpoke ${ourScript.seconds.toFixed(2)} s ` +
      `(library ${ourScript.inner?.toFixed(2)} s), peak RSS ${ourScript.maxRssMB.toFixed(0)} MB | speed ratio perf/perfpoke ${(perfScript.seconds / ourScript.seconds).toFixed(2)}x`,
  );
  const goals = [
    `stats ≥ 1.0x perf: ${perfStats.seconds / ourStats.seconds >= 1 ? 'met' : 'NOT met'}`,
    `peak RSS < 200 MB: stats ${ourStats.maxRssMB < 200 ? 'met' : 'NOT met'}, script ${ourScript.maxRssMB < 200 ? 'met' : 'NOT met'}`,
  ];
  console.log(`reader: goals: ${goals.join('; ')}`);
}

/** Child mode: one library call, output to stdout, time on stderr. */
async function child(what: string, file: string): Promise<void> {
  const t0 = performance.now();
  if (what === 'stats') {
    const { openSession } = await import('../src/session/session.js');
    const { collectStats } = await import('../src/session/stats.js');
    const { statsLines } = await import('../src/cli/commands/stats.js');
    const s = await openSession(file);
    const st = await collectStats(s);
    process.stdout.write('\n' + statsLines(st, false).join('\n') + '\n');
    await s.close();
  } else {
    const { runScript, parseFields } = await import('../src/cli/commands/script.js');
    await runScript(file, { fields: parseFields(FIELDS) });
  }
  process.stderr.write(`INNER ${((performance.now() - t0) / 1000).toFixed(3)}\n`);
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!);
