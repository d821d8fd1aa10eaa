/**
 * What `perfpoke record` follows, as perf's struct target: every CPU (`-a`),
 * existing tasks (`-p PID` = all threads of the processes, `-t TID` = those
 * threads), or the workload and its children (a command without `-a`/`-p`/`-t`).
 * The workload is started "corked", as perf's evlist__prepare_workload does:
 * it waits before exec until the events are open on its pid, so
 * enable_on_exec starts counting exactly at the exec.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export class TargetError extends Error {
  readonly exitCode = 2;
}

/** Thread ids per process, for `-p` (all threads, read now) or `-t` (as given). */
export function resolveThreads(
  pids: number[] | undefined,
  tids: number[] | undefined,
  procRoot = '/proc',
): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const pid of pids ?? []) {
    let tasks: number[];
    try {
      tasks = readdirSync(join(procRoot, String(pid), 'task'))
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .sort((a, b) => a - b);
    } catch {
      throw new TargetError(`-p ${pid}: no such process`);
    }
    out.set(pid, tasks);
  }
  for (const tid of tids ?? []) {
    let tgid: number;
    try {
      tgid = Number(/^Tgid:\s*(\d+)/m.exec(readTaskStatus(procRoot, tid))?.[1] ?? tid);
    } catch {
      throw new TargetError(`-t ${tid}: no such thread`);
    }
    const list = out.get(tgid) ?? [];
    if (!list.includes(tid)) list.push(tid);
    out.set(tgid, list);
  }
  return out;
}

/** /proc/TID/status exists for every thread id, even those /proc does not list. */
function readTaskStatus(procRoot: string, tid: number): string {
  return readFileSync(join(procRoot, String(tid), 'status'), 'utf8');
}

/** execvp's lookup: a path with a slash as given, else the first executable in $PATH. */
export function findExecutable(cmd: string, path = process.env.PATH ?? '/usr/bin:/bin'): string | undefined {
  const ok = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return ok(cmd) ? cmd : undefined;
  for (const dir of path.split(delimiter)) {
    const p = join(dir === '' ? '.' : dir, cmd);
    if (ok(p)) return p;
  }
  return undefined;
}

export interface CorkedWorkload {
  child: ChildProcess;
  pid: number;
  /** Let it exec (perf's evlist__start_workload). */
  go(): void;
  /** Never exec: the corked child exits without running the command. */
  cancel(): void;
}

/**
 * Start `command` stopped before its exec: a /bin/sh that waits for a line
 * on fd 3, then execs the command with fd 3 closed. `stdoutToStderr`: perf
 * does that when its own stdout carries the data (`-o -`).
 */
export function spawnCorked(command: string[], stdoutToStderr: boolean): CorkedWorkload {
  const [cmd, ...args] = command;
  if (!cmd || findExecutable(cmd) === undefined)
    throw new TargetError(`cannot run ${cmd ?? '(nothing)'}: ENOENT (not found in PATH)`);
  const child = spawn('/bin/sh', ['-c', 'read -r _ <&3 || exit 127; exec "$0" "$@" 3<&-', cmd, ...args], {
    stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit', 'pipe'],
  });
  if (child.pid === undefined) throw new TargetError(`cannot run ${cmd}: /bin/sh did not start`);
  const cork = child.stdio[3] as NodeJS.WritableStream;
  cork.on?.('error', () => undefined); // the child may be gone already
  return {
    child,
    pid: child.pid,
    go: () => cork.end('\n'),
    cancel: () => cork.end(),
  };
}
