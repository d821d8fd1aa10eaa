/**
 * User-space memory maps per process, as perf builds them from MMAP/MMAP2
 * records (machine.c machine__process_mmap2_event → thread__insert_map →
 * maps__fixup_overlappings; map.c map__new). perf script prints a user-space
 * callchain entry as its offset in the mapped file (map__map_ip), so we need
 * to know which map covers an address at the time of a sample. No symbols.
 *
 * Threads of one process share its maps (thread__init_maps keys them by the
 * leader), a fork into a new process copies the parent's (maps__clone).
 */

import { PERF_RECORD_MISC_MMAP_DATA } from '../abi/record-type.js';

const PROT_EXEC = 4;

/** What onMmapRecord reads of an MMAP or MMAP2 record. */
export interface MmapLike {
  kind: 'mmap' | 'mmap2';
  misc: number;
  pid: number;
  addr: bigint;
  len: bigint;
  pgoff: bigint;
  filename: string;
  prot?: number;
}

interface UserMap {
  start: bigint;
  end: bigint;
  pgoff: bigint;
  /** Anonymous memory, [stack], [heap], /SYSV…: map_ip is the identity (map__new). */
  identity: boolean;
  /** The mapped file as the record names it (perf's dso name). */
  filename: string;
}

/** A map covering an address, and that address as perf's map__map_ip gives it. */
export interface MapHit {
  filename: string;
  identity: boolean;
  /** The map's first address. */
  start: bigint;
  /** ip - start + pgoff (the ip itself for identity maps). */
  mapIp: bigint;
}

/** perf's is_anon_memory || is_no_dso_memory. */
function isIdentityMapping(filename: string): boolean {
  return (
    filename === '//anon' ||
    filename.startsWith('/dev/zero') ||
    filename.startsWith('/anon_hugepage') ||
    filename.startsWith('[stack') ||
    filename.startsWith('/SYSV') ||
    filename === '[heap]'
  );
}

export class UserMaps {
  /** pid → maps sorted by start, non-overlapping. */
  private readonly byPid = new Map<number, UserMap[]>();

  private mapsOf(pid: number): UserMap[] {
    let m = this.byPid.get(pid);
    if (!m) {
      m = [];
      this.byPid.set(pid, m);
    }
    return m;
  }

  /**
   * A user MMAP/MMAP2 record with perf's prot (machine__process_mmap_event):
   * MMAP2's own, and for MMAP PROT_EXEC unless it carries MISC_MMAP_DATA.
   */
  onMmapRecord(rec: MmapLike): void {
    const exec =
      rec.kind === 'mmap2' ? ((rec.prot ?? 0) & PROT_EXEC) !== 0 : (rec.misc & PERF_RECORD_MISC_MMAP_DATA) === 0;
    this.onMmap(rec.pid, rec.addr, rec.len, rec.pgoff, rec.filename, exec);
  }

  /** A user mapping: insert, trimming what it overlaps (maps__fixup_overlappings). */
  onMmap(pid: number, start: bigint, len: bigint, pgoff: bigint, filename: string, exec = true): void {
    const maps = this.mapsOf(pid);
    const end = start + len;
    // first map that ends after `start`
    let lo = 0;
    let hi = maps.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (maps[mid]!.end <= start) lo = mid + 1;
      else hi = mid;
    }
    let k = lo;
    const repl: UserMap[] = [];
    while (k < maps.length && maps[k]!.start < end) {
      const m = maps[k]!;
      if (m.start < start) repl.push({ ...m, end: start });
      if (m.end > end) repl.push({ ...m, start: end, pgoff: m.identity ? m.pgoff : m.pgoff + (end - m.start) });
      k++;
    }
    // map__new names executable anonymous memory after the JIT symbol file perf would read for it
    const anon =
      exec && (filename === '//anon' || filename.startsWith('/dev/zero') || filename.startsWith('/anon_hugepage'));
    const name = anon ? `/tmp/perf-${pid}.map` : filename;
    const mine: UserMap = { start, end, pgoff, identity: isIdentityMapping(filename), filename: name };
    const before = repl.filter((m) => m.start < start);
    const after = repl.filter((m) => m.start >= end);
    maps.splice(lo, k - lo, ...before, mine, ...after);
  }

  /** FORK into a new process (pid ≠ ppid): the child starts with a copy of the parent's maps. */
  onFork(pid: number, ppid: number): void {
    if (pid === ppid) return;
    this.byPid.set(
      pid,
      (this.byPid.get(ppid) ?? []).map((m) => ({ ...m })),
    );
  }

  /**
   * What perf prints for a user-space callchain address of process `pid`: its
   * offset in the mapped file (ip - start + pgoff), the address itself for
   * identity maps, or the address when no map covers it.
   */
  printedAddress(pid: number, ip: bigint): bigint {
    return this.lookup(pid, ip)?.mapIp ?? ip;
  }

  /**
   * Where perf 6.1's libunwind glue believes `filename` is loaded in process
   * `pid` (read_unwind_spec_eh_frame, with 6.1.y's "Fix base address for
   * .eh_frame"): over the process's maps of that file in address order, the
   * first one's start - pgoff. After fork + exec the child still holds the
   * parent's maps (perf does not flush them on exec), so a file both mapped
   * — ld.so, libc under `sh -c` — may take the parent's, lower, base: then
   * perf's FDE search misses and libunwind falls back to its frame-pointer
   * heuristics.
   */
  loadBase(pid: number, filename: string): bigint | undefined {
    let base: bigint | undefined;
    for (const m of this.byPid.get(pid) ?? [])
      if (m.filename === filename && (base === undefined || m.start < base)) base = m.start - m.pgoff;
    return base;
  }

  /** The map of process `pid` covering ip, or undefined. */
  lookup(pid: number, ip: bigint): MapHit | undefined {
    const maps = this.byPid.get(pid);
    if (!maps || maps.length === 0) return undefined;
    let lo = 0;
    let hi = maps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = maps[mid]!;
      if (ip < m.start) hi = mid - 1;
      else if (ip >= m.end) lo = mid + 1;
      else {
        const mapIp = m.identity ? ip : BigInt.asUintN(64, ip - m.start + m.pgoff);
        return { filename: m.filename, identity: m.identity, start: m.start, mapIp };
      }
    }
    return undefined;
  }
}
