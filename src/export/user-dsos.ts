/**
 * Which file a user-space address of a process is mapped from, for the
 * samples table's `dso`: session/user-maps.ts keeps only what perf prints for
 * callchains (offsets), not names. A later MMAP over the same range wins, as
 * perf's maps__fixup_overlappings makes it; a FORK into a new process starts
 * from a copy of the parent's maps (maps__clone).
 */
interface NamedMap {
  start: bigint;
  end: bigint;
  filename: string;
}

export class UserDsos {
  private readonly byPid = new Map<number, NamedMap[]>();

  onMmap(pid: number, start: bigint, len: bigint, filename: string): void {
    const maps = this.byPid.get(pid) ?? [];
    this.byPid.set(pid, maps);
    maps.push({ start, end: start + len, filename });
  }

  onFork(pid: number, ppid: number): void {
    if (pid !== ppid) this.byPid.set(pid, [...(this.byPid.get(ppid) ?? [])]);
  }

  /** The newest mapping covering ip, or undefined. */
  find(pid: number, ip: bigint): string | undefined {
    const maps = this.byPid.get(pid);
    if (!maps) return undefined;
    for (let i = maps.length - 1; i >= 0; i--) {
      const m = maps[i]!;
      if (ip >= m.start && ip < m.end) return m.filename;
    }
    return undefined;
  }
}
