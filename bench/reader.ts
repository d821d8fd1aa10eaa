/**
 * Reader benchmark: perfpoke stats / script against perf report --stats /
 * perf script on the same ≥ 300 MB genuine recording, same run.
 *
 * The recording is made once (bench/out/big.data, reused while ≥ 300 MB):
 *   perf record -a -g -d -B -e cpu-clock -c 50000 -- <two busy shell loops>
 * (-d adds ADDR so `-F …,addr` is valid; -B skips perf's build-id pass.)
 *
 * Each tool runs as its own process under /usr/bin/time (wall seconds, peak
 * RSS), stdout to /dev/null. perfpoke is built first (tsc and the bundle →
 * bench/out/dist, as `npm run build` does) and measured twice: the CLI (the bundle
 * stats …`, which loads every command module at start-up) and the library call
 * the command makes in a bare node process (bench/out/child.mjs). Stats runs
 * are repeated and the medians compared (this machine is noisy); `script`
 * with perf's default fields (callchain lines) is paired with perf.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { paired } from './lib/paired.js';
import { recordGoal } from './lib/goals.js';
import { buildDist, cli, dist } from './lib/build.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const outDir = join(here, 'out');
const big = join(outDir, 'big.data');
const MIN_BYTES = 300e6;
const FIELDS = 'comm,tid,pid,cpu,time,period,event,ip,addr';

function record(seconds: number): number {
  const tmp = `${big}.tmp-${process.pid}`;
  const busy =
    `end=$(($(date +%s)+${seconds})); ` +
    '(while [ $(date +%s) -lt $end ]; do :; done) & while [ $(date +%s) -lt $end ]; do :; done; wait';
  const r = spawnSync(
    '/usr/bin/perf',
    ['record', '-q', '-a', '-g', '-d', '-B', '-e', 'cpu-clock', '-c', '50000', '-o', tmp, '--', 'sh', '-c', busy],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (r.status !== 0 || !existsSync(tmp)) {
    rmSync(tmp, { force: true });
    throw new Error(`perf record failed: ${r.stderr?.toString()}`);
  }
  renameSync(tmp, big);
  return statSync(big).size;
}

/**
 * A plain recording (no -g, not system-wide) of a program walking and
 * hashing files, cpu-clock every 5 µs: ~2 M samples in user space (libc,
 * md5sum) and the kernel, made once into bench/out/plain.data.
 */
function ensurePlainRecording(): string {
  const plain = join(outDir, 'plain.data');
  if (existsSync(plain)) return plain;
  const tmp = `${plain}.tmp-${process.pid}`;
  const work = 'for i in 1 2 3; do find /usr/lib -name "*.so*" -type f | head -500 | xargs md5sum > /dev/null; done';
  console.log('reader: recording a plain perf record of find | md5sum (once)…');
  const r = spawnSync(
    '/usr/bin/perf',
    ['record', '-q', '-e', 'cpu-clock', '-c', '5000', '--switch-events', '-o', tmp, '--', 'sh', '-c', work],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (r.status !== 0 || !existsSync(tmp)) throw new Error(`perf record failed: ${r.stderr?.toString()}`);
  renameSync(tmp, plain);
  return plain;
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
    const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %M', cmd, ...args], {
      cwd: root,
      stdio: ['ignore', devnull, 'pipe'],
      maxBuffer: 1 << 26,
    });
    const err = r.stderr.toString();
    const m = /TIME ([\d.]+) (\d+)\s*$/.exec(err);
    if (r.status !== 0 || !m) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${err.slice(-500)}`);
    const inner = /INNER ([\d.]+)/.exec(err);
    return { seconds: Number(m[1]), maxRssMB: Number(m[2]) / 1024, inner: inner ? Number(inner[1]) : undefined };
  } finally {
    closeSync(devnull);
  }
}

const childJs = join(outDir, 'child.mjs');

/** Compile and bundle perfpoke into bench/out/dist (bench/lib/build.ts) and write the bare library runner. */
function build(): boolean {
  if (!buildDist() || !existsSync(join(dist, 'session', 'stats.js'))) {
    console.log('reader: build failed; measuring through tsx instead');
    return false;
  }
  writeFileSync(
    childJs,
    `const t0 = performance.now();
const [what, file, fields] = process.argv.slice(2);
if (what === 'stats') {
  const { openSession } = await import('./dist/session/session.js');
  const { collectStats } = await import('./dist/session/stats.js');
  const { statsLines } = await import('./dist/cli/commands/stats.js');
  const s = await openSession(file);
  const st = await collectStats(s);
  process.stdout.write('\\n' + statsLines(st, false).join('\\n') + '\\n');
  await s.close();
} else {
  const { runScript, parseFields } = await import('./dist/cli/commands/script.js');
  await runScript(file, { fields: parseFields(fields) });
}
process.stderr.write('INNER ' + ((performance.now() - t0) / 1000).toFixed(3) + '\\n');
`,
  );
  return true;
}

let compiled = false;
const ours = (what: 'stats' | 'script'): Run =>
  compiled
    ? timed(process.execPath, [childJs, what, big, FIELDS])
    : timed(process.execPath, ['--import', 'tsx', join(here, 'reader.ts'), '--child', what, big]);
const oursCli = (args: string[]): Run => timed(process.execPath, cli(...args).slice(1));

function median(runs: Run[]): Run {
  const s = [...runs].sort((a, b) => a.seconds - b.seconds);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<void> {
  if (spawnSync('/usr/bin/perf', ['--version']).status !== 0) {
    console.log('reader: skipped (perf not installed)');
    return;
  }
  const size = ensureRecording();
  console.log(`reader: ${big}: ${(size / 1e6).toFixed(0)} MB`);

  compiled = build();

  const ps: Run[] = [];
  const os: Run[] = [];
  const cs: Run[] = [];
  for (let i = 0; i < 5; i++) {
    ps.push(timed('/usr/bin/perf', ['report', '--stats', '-i', big]));
    os.push(ours('stats'));
    if (compiled) cs.push(oursCli(['stats', '-i', big]));
  }
  const perfStats = median(ps);
  const ourStats = median(os);
  const cliStats = compiled ? median(cs) : undefined;
  console.log(
    `reader: stats (median of 5)  perf report --stats ${perfStats.seconds.toFixed(2)} s, ` +
      `${perfStats.maxRssMB.toFixed(0)} MB | ` +
      `perfpoke library ${ourStats.seconds.toFixed(2)} s, ${ourStats.maxRssMB.toFixed(0)} MB → ` +
      `${(perfStats.seconds / ourStats.seconds).toFixed(2)}x perf's speed` +
      (cliStats
        ? ` | perfpoke stats CLI ${cliStats.seconds.toFixed(2)} s, ${cliStats.maxRssMB.toFixed(0)} MB → ` +
          `${(perfStats.seconds / cliStats.seconds).toFixed(2)}x`
        : ''),
  );

  const perfScript = timed('/usr/bin/perf', ['script', '-i', big, '-F', FIELDS]);
  const ourScript = compiled ? oursCli(['script', '-i', big, '-F', FIELDS]) : ours('script');
  console.log(
    `reader: script -F ${FIELDS}  perf ${perfScript.seconds.toFixed(2)} s, ${perfScript.maxRssMB.toFixed(0)} MB | ` +
      `perfpoke ${compiled ? 'CLI' : '(tsx)'} ${ourScript.seconds.toFixed(2)} s, ` +
      `${ourScript.maxRssMB.toFixed(0)} MB → ${(perfScript.seconds / ourScript.seconds).toFixed(2)}x perf's speed`,
  );
  // the goal (issue 16): the CLI, as a user runs it, against perf in paired runs
  if (compiled) {
    const p = paired(cli('stats', '-i', big), ['/usr/bin/perf', 'report', '--stats', '-i', big], 7, root);
    recordGoal({
      what: `stats -i (${(size / 1e6).toFixed(0)} MB perf record -a -g) vs perf report --stats`,
      measured: `${p.speedup.toFixed(2)}x perf (cpu ${p.cpuSpeedup.toFixed(2)}x), median of ${p.pairs} pairs`,
      target: '>= 1.5x',
      met: p.speedup >= 1.5,
    });
    recordGoal({
      what: 'stats peak RSS',
      measured: `${p.a.rssMB.toFixed(0)} MB (perf ${p.b.rssMB.toFixed(0)} MB)`,
      target: '< 200 MB',
      met: p.a.rssMB < 200,
    });
    // perf's default fields on a -g file: every sample prints its callchain lines with sym+off and dso
    const sc = paired(cli('script', '-i', big), ['/usr/bin/perf', 'script', '-i', big], 3, root);
    recordGoal({
      what: `script -i (${(size / 1e6).toFixed(0)} MB -a -g, default fields: callchains) vs perf script`,
      measured:
        `${sc.speedup.toFixed(2)}x perf (cpu ${sc.cpuSpeedup.toFixed(2)}x), median of ${sc.pairs} pairs; ` +
        `peak RSS ${sc.a.rssMB.toFixed(0)} MB (perf ${sc.b.rssMB.toFixed(0)} MB)`,
      target: '>= 1.2x',
      met: sc.speedup >= 1.2,
    });
    // and on what a plain `perf record` of a program makes: no callchains, one sym+off (dso) per sample
    const plain = ensurePlainRecording();
    const pl = paired(cli('script', '-i', plain), ['/usr/bin/perf', 'script', '-i', plain], 3, root);
    recordGoal({
      what: `script -i (${(statSync(plain).size / 1e6).toFixed(0)} MB plain perf record, no -g, default fields)`,
      measured:
        `${pl.speedup.toFixed(2)}x perf (cpu ${pl.cpuSpeedup.toFixed(2)}x), median of ${pl.pairs} pairs; ` +
        `peak RSS ${pl.a.rssMB.toFixed(0)} MB (perf ${pl.b.rssMB.toFixed(0)} MB)`,
      target: '>= 1.2x',
      met: pl.speedup >= 1.2,
    });
  }
  recordGoal({
    what: 'script peak RSS',
    measured: `${ourScript.maxRssMB.toFixed(0)} MB (perf ${perfScript.maxRssMB.toFixed(0)} MB)`,
    target: '< 200 MB',
    met: ourScript.maxRssMB < 200,
  });
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
    process.stdout.write(`\n${statsLines(st, false).join('\n')}\n`);
    await s.close();
  } else {
    const { runScript, parseFields } = await import('../src/cli/commands/script.js');
    await runScript(file, { fields: parseFields(FIELDS) });
  }
  process.stderr.write(`INNER ${((performance.now() - t0) / 1000).toFixed(3)}\n`);
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!);
