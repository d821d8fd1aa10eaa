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

interface UserMap {
  start: bigint;
  end: bigint;
  pgoff: bigint;
  /** Anonymous memory, [stack], [heap], /SYSV…: map_ip is the identity (map__new). */
  identity: boolean;
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

  /** A user MMAP/MMAP2 record: insert, trimming what it overlaps (maps__fixup_overlappings). */
  onMmap(pid: number, start: bigint, len: bigint, pgoff: bigint, filename: string): void {
    const maps = this.mapsOf(pid);
    const end = start + len;
    const kept: UserMap[] = [];
    for (const m of maps) {
      if (m.end <= start || m.start >= end) {
        kept.push(m);
        continue;
      }
      if (m.start < start) kept.push({ ...m, end: start });
      if (m.end > end) kept.push({ ...m, start: end, pgoff: m.identity ? m.pgoff : m.pgoff + (end - m.start) });
    }
    kept.push({ start, end, pgoff, identity: isIdentityMapping(filename) });
    kept.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.byPid.set(pid, kept);
  }

  /** FORK into a new process (pid ≠ ppid): the child starts with a copy of the parent's maps. */
  onFork(pid: number, ppid: number): void {
    if (pid === ppid) return;
    this.byPid.set(pid, (this.byPid.get(ppid) ?? []).map((m) => ({ ...m })));
  }

  /**
   * What perf prints for a user-space callchain address of process `pid`: its
   * offset in the mapped file (ip - start + pgoff), the address itself for
   * identity maps, or the address when no map covers it.
   */
  printedAddress(pid: number, ip: bigint): bigint {
    const maps = this.byPid.get(pid);
    if (!maps || maps.length === 0) return ip;
    let lo = 0;
    let hi = maps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = maps[mid]!;
      if (ip < m.start) hi = mid - 1;
      else if (ip >= m.end) lo = mid + 1;
      else return m.identity ? ip : BigInt.asUintN(64, ip - m.start + m.pgoff);
    }
    return ip;
  }
}
