/**
 * FORK, COMM and MMAP2 records for the processes that already run when
 * recording starts, read from /proc — perf's perf_event__synthesize_threads
 * (per thread FORK then COMM, then the process's executable maps). Without
 * them samples and switches of those tasks have no name and no maps.
 * Like perf (without --data) only executable mappings are written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { PERF_RECORD_MISC_FORK_EXEC, PERF_RECORD_MISC_USER, RecordType } from '../abi/record-type.js';
import { ByteWriter } from '../io/byte-writer.js';

/** perf_event.h TASK_COMM_LEN-sized names; the kernel truncates to 15 chars. */
const PROT_READ = 1;
const PROT_WRITE = 2;
const PROT_EXEC = 4;
const MAP_SHARED = 1;
const MAP_PRIVATE = 2;

export interface MapsLine {
  start: bigint;
  end: bigint;
  perms: string;
  pgoff: bigint;
  maj: number;
  min: number;
  ino: bigint;
  name: string;
}

/** One /proc/PID/maps line; undefined for anything else. */
export function parseMapsLine(line: string): MapsLine | undefined {
  const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) ([0-9a-f]+):([0-9a-f]+) (\d+)\s*(.*)$/.exec(line);
  if (!m) return undefined;
  return {
    start: BigInt(`0x${m[1]}`),
    end: BigInt(`0x${m[2]}`),
    perms: m[3]!,
    pgoff: BigInt(`0x${m[4]}`),
    maj: parseInt(m[5]!, 16),
    min: parseInt(m[6]!, 16),
    ino: BigInt(m[7]!),
    name: m[8]!.trim(),
  };
}

/**
 * sample_id tail: zero but for the id, as perf stamps its synthesized records
 * (perf script then shows them under pid 0).
 */
function sampleId(w: ByteWriter, _pid: number, _tid: number, id: bigint): void {
  w.u32(0).u32(0).u64(0n).u32(0).u32(0).u64(id);
}

function comm(w: ByteWriter, pid: number, tid: number, name: string, id: bigint): void {
  const at = w.pos;
  w.u32(RecordType.COMM).u16(0).u16(0).i32(pid).i32(tid);
  w.cstring(name, 8);
  sampleId(w, pid, tid, id);
  w.patchU16(at + 6, w.pos - at);
}

/**
 * perf_event__synthesize_fork: the main thread's parent is PPid from
 * /proc/PID/status, every other thread's parent is the main thread.
 */
function fork(w: ByteWriter, tgid: number, tid: number, ppid: number, id: bigint): void {
  const at = w.pos;
  const parent = tid === tgid ? ppid : tgid;
  w.u32(RecordType.FORK).u16(PERF_RECORD_MISC_FORK_EXEC).u16(0).i32(tgid).i32(parent).i32(tid).i32(parent).u64(0n);
  sampleId(w, tgid, tid, id);
  w.patchU16(at + 6, w.pos - at);
}

function mmap2(w: ByteWriter, pid: number, m: MapsLine, id: bigint): void {
  const at = w.pos;
  let prot = 0;
  if (m.perms[0] === 'r') prot |= PROT_READ;
  if (m.perms[1] === 'w') prot |= PROT_WRITE;
  if (m.perms[2] === 'x') prot |= PROT_EXEC;
  const flags = m.perms[3] === 's' ? MAP_SHARED : MAP_PRIVATE;
  w.u32(RecordType.MMAP2).u16(PERF_RECORD_MISC_USER).u16(0).i32(pid).i32(pid);
  w.u64(m.start)
    .u64(m.end - m.start)
    .u64(m.pgoff)
    .u32(m.maj)
    .u32(m.min)
    .u64(m.ino)
    .u64(0n)
    .u32(prot)
    .u32(flags);
  w.cstring(m.name === '' ? '//anon' : m.name, 8);
  sampleId(w, pid, pid, id);
  w.patchU16(at + 6, w.pos - at);
}

function numericEntries(dir: string): number[] {
  try {
    return readdirSync(dir)
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return []; // the task exited while we looked
  }
}

/**
 * Which tasks to describe: every process (system wide, with FORK records, as
 * perf's synthesize_threads), or perf's thread map of `-p`/`-t`/a workload
 * (synthesize_thread_map: COMM per thread, no FORK; MMAP2 unless `noMaps`,
 * which is the workload case: it has not exec'd yet).
 */
export interface TaskSelection {
  /** Processes to describe, each with only the listed threads (undefined: all of them). */
  threads: Map<number, number[] | undefined>;
  noMaps?: boolean;
}

/**
 * Synthesize COMM per thread and MMAP2 per executable mapping for every
 * process under `procRoot` (or the selected ones). Tasks that exit meanwhile
 * are skipped. `id` is the tracking event's id, stamped into the sample_id tail.
 */
export function synthesizeTasks(
  le: boolean,
  id: bigint,
  procRoot = '/proc',
  only?: TaskSelection,
): { bytes: Uint8Array; records: number; fork: number; comm: number; mmap2: number } {
  const w = new ByteWriter(le, 1 << 16);
  let mmaps = 0;
  let forks = 0;
  let comms = 0;
  const pids = only ? [...only.threads.keys()] : numericEntries(procRoot);
  for (const pid of pids) {
    const pdir = join(procRoot, String(pid));
    let ppid = 0;
    try {
      ppid = Number(/^PPid:\s*(\d+)/m.exec(readFileSync(join(pdir, 'status'), 'utf8'))?.[1] ?? 0);
    } catch {
      continue; // exited
    }
    for (const tid of only?.threads.get(pid) ?? numericEntries(join(pdir, 'task'))) {
      let name: string;
      try {
        name = readFileSync(join(pdir, 'task', String(tid), 'comm'), 'utf8').replace(/\n$/, '');
      } catch {
        continue;
      }
      if (!only) {
        fork(w, pid, tid, ppid, id);
        forks++;
      }
      comm(w, pid, tid, name, id);
      comms++;
    }
    if (only?.noMaps) continue;
    let maps = '';
    try {
      maps = readFileSync(join(pdir, 'maps'), 'utf8');
    } catch {
      continue;
    }
    for (const line of maps.split('\n')) {
      const m = parseMapsLine(line);
      if (m?.perms[2] !== 'x') continue;
      mmap2(w, pid, m, id);
      mmaps++;
    }
  }
  return { bytes: w.finish().slice(), records: forks + comms + mmaps, fork: forks, comm: comms, mmap2: mmaps };
}
