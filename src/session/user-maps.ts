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

/** Numbers up to this are exact doubles. */
const SAFE = 2 ** 53;

/**
 * Every map any process has held, as columns (a system-wide recording keeps
 * hundreds of thousands: an object and three BigInts each cost some 190 bytes,
 * these 29). A map is never changed once made: onMmap trims by making new ones,
 * so processes share them by index. Values past 2^53 are kept exactly in `big`.
 */
class MapColumns {
  count = 0;
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  pgoff = new Float64Array(1024);
  /** Index into `names`. */
  name = new Int32Array(1024);
  /** Anonymous memory, [stack], [heap], /SYSV…: map_ip is the identity (map__new). */
  identity = new Uint8Array(1024);
  /** The mapped files as the records name them (perf's dso names), each once. */
  readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  /** Exact values of maps with a start, end or pgoff past 2^53 (or below 0). */
  readonly big = new Map<number, [bigint, bigint, bigint]>();

  nameId(filename: string): number {
    let id = this.nameIds.get(filename);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(filename);
      this.nameIds.set(filename, id);
    }
    return id;
  }

  add(start: bigint, end: bigint, pgoff: bigint, name: number, identity: boolean): number {
    if (this.count === this.start.length) this.grow(this.count * 2);
    const i = this.count++;
    this.start[i] = Number(start);
    this.end[i] = Number(end);
    this.pgoff[i] = Number(pgoff);
    this.name[i] = name;
    this.identity[i] = identity ? 1 : 0;
    if (!safe(start) || !safe(end) || !safe(pgoff)) this.big.set(i, [start, end, pgoff]);
    return i;
  }

  startOf(i: number): bigint {
    return this.big.get(i)?.[0] ?? BigInt(this.start[i]!);
  }
  endOf(i: number): bigint {
    return this.big.get(i)?.[1] ?? BigInt(this.end[i]!);
  }
  pgoffOf(i: number): bigint {
    return this.big.get(i)?.[2] ?? BigInt(this.pgoff[i]!);
  }

  private grow(n: number): void {
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.start = f(this.start);
    this.end = f(this.end);
    this.pgoff = f(this.pgoff);
    const name = new Int32Array(n);
    name.set(this.name);
    this.name = name;
    const identity = new Uint8Array(n);
    identity.set(this.identity);
    this.identity = identity;
  }
}

function safe(v: bigint): boolean {
  return v >= 0n && v <= SAFE;
}

export class UserMaps {
  private readonly maps = new MapColumns();
  /**
   * pid → indexes of its maps, sorted by start, non-overlapping. A list is
   * never changed (onMmap makes a new one), so a fork shares its parent's:
   * a system-wide recording forks thousands of processes from parents with
   * hundreds of maps.
   */
  private readonly byPid = new Map<number, Int32Array>();

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
    const c = this.maps;
    const maps = this.byPid.get(pid) ?? EMPTY;
    const end = start + len;
    // first map that ends after `start`
    let lo = 0;
    let hi = maps.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (c.endOf(maps[mid]!) <= start) lo = mid + 1;
      else hi = mid;
    }
    let k = lo;
    let before = -1;
    let after = -1;
    while (k < maps.length && c.startOf(maps[k]!) < end) {
      const m = maps[k]!;
      const ms = c.startOf(m);
      const me = c.endOf(m);
      const id = c.identity[m] === 1;
      if (ms < start) before = c.add(ms, start, c.pgoffOf(m), c.name[m]!, id);
      if (me > end) after = c.add(end, me, id ? c.pgoffOf(m) : c.pgoffOf(m) + (end - ms), c.name[m]!, id);
      k++;
    }
    // map__new names executable anonymous memory after the JIT symbol file perf would read for it
    const anon =
      exec && (filename === '//anon' || filename.startsWith('/dev/zero') || filename.startsWith('/anon_hugepage'));
    const name = anon ? `/tmp/perf-${pid}.map` : filename;
    const mine = c.add(start, end, pgoff, c.nameId(name), isIdentityMapping(filename));
    const inserted = (before >= 0 ? 1 : 0) + 1 + (after >= 0 ? 1 : 0);
    const next = new Int32Array(maps.length - (k - lo) + inserted);
    next.set(maps.subarray(0, lo));
    let w = lo;
    if (before >= 0) next[w++] = before;
    next[w++] = mine;
    if (after >= 0) next[w++] = after;
    next.set(maps.subarray(k), w);
    this.byPid.set(pid, next);
  }

  /** FORK into a new process (pid ≠ ppid): the child starts with a copy of the parent's maps. */
  onFork(pid: number, ppid: number): void {
    if (pid === ppid) return;
    this.byPid.set(pid, this.byPid.get(ppid) ?? EMPTY);
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
    const c = this.maps;
    let base: bigint | undefined;
    for (const m of this.byPid.get(pid) ?? EMPTY) {
      if (c.names[c.name[m]!] !== filename) continue;
      const start = c.startOf(m);
      if (base === undefined || start < base) base = start - c.pgoffOf(m);
    }
    return base;
  }

  /** The map of process `pid` covering ip, or undefined. */
  lookup(pid: number, ip: bigint): MapHit | undefined {
    const maps = this.byPid.get(pid);
    if (!maps || maps.length === 0) return undefined;
    const m = this.maps.big.size === 0 ? this.find(maps, Number(ip)) : this.findExact(maps, ip);
    if (m < 0) return undefined;
    const c = this.maps;
    const identity = c.identity[m] === 1;
    const start = c.startOf(m);
    const mapIp = identity ? ip : BigInt.asUintN(64, ip - start + c.pgoffOf(m));
    return { filename: c.names[c.name[m]!]!, identity, start, mapIp };
  }

  /**
   * The map covering x (an address as a double), or -1. Exact while every
   * bound is at most 2^53: an address past that rounds to no less than 2^53.
   */
  private find(maps: Int32Array, x: number): number {
    const { start, end } = this.maps;
    let lo = 0;
    let hi = maps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = maps[mid]!;
      if (x < start[m]!) hi = mid - 1;
      else if (x >= end[m]!) lo = mid + 1;
      else return m;
    }
    return -1;
  }

  /** `find` with BigInts, for when some map's bounds are past 2^53. */
  private findExact(maps: Int32Array, ip: bigint): number {
    const c = this.maps;
    let lo = 0;
    let hi = maps.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = maps[mid]!;
      if (ip < c.startOf(m)) hi = mid - 1;
      else if (ip >= c.endOf(m)) lo = mid + 1;
      else return m;
    }
    return -1;
  }
}

const EMPTY = new Int32Array(0);
