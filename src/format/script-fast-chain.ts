/**
 * The callchain lines of a `perf script` sample printed from the record bytes
 * (script-fast.ts): "\t<addr> sym+0xoff (dso)\n" per entry, as the general
 * path prints them (perf-script.ts printSample with script-callchain.ts
 * callchainEntries and UserMaps.printedAddress). A `perf record -g` sample
 * repeats the same few hundred addresses, so each entry's whole line is kept
 * as bytes per address space (the kernel, or a process's maps) and copied in;
 * a BigInt is made only on a cache miss.
 */
import type { ByteText } from '../io/byte-text.js';
import { viewOf } from '../io/byte-copy.js';
import type { ScriptSymbols, SymbolColumns } from './script-symbols.js';

/**
 * The address-space switches perf's callchains carry (PERF_CONTEXT_*): a u64
 * whose high half is ~0 and whose low half, as an int32, is at least -4095.
 */
const CONTEXT_MAX = -4095;
const CONTEXT_USER = -512;
const KNOWN_CONTEXTS = new Set([-32, -128, -512, -2048, -2176, -2560]);

/** What a chain's lines depend on beside the addresses. */
export interface ChainContext {
  cols: SymbolColumns | undefined;
  syms: ScriptSymbols | undefined;
  /** --max-stack (perf's default: 127). */
  maxStack: number;
  /** UserMaps.printedAddress: a user address as its offset in the mapped file. */
  printed: (pid: number, ip: bigint) => bigint;
}

/** Copy a cached piece of text in (kept as a DataView: see io/byte-copy.ts). */
export function putBytes(out: ByteText, a: DataView): void {
  out.copyFrom(a, 0, a.byteLength);
}

/** The space of kernel addresses in `invalidate` (pids are 32-bit: never this). */
export const KERNEL_SPACE = -(2 ** 40);

/**
 * Past this many cached bytes or texts the caches start again (a bound on
 * memory: each text also costs an entry in a space's Map and 12 bytes of
 * index). A system-wide recording meets new addresses all along: 32 MiB and
 * no bound on texts held 56 MiB of buffers and ~2 M Map entries at the end of
 * a 358 MB file, and ran no faster than these bounds.
 */
const ARENA_MAX = 8 << 20;
const ENTRIES_MAX = 1 << 18;

/**
 * Cached texts of addresses, per address space (the kernel, or a process's
 * maps), keyed by the address's low half as an int32 (a small integer key,
 * no heap number per lookup), checked against its high half. The texts sit
 * in one byte arena (no object per text). A space is dropped when what its
 * texts depend on may change (`invalidate`): a process's on its MMAP, MMAP2
 * or FORK, the kernel's on a kernel MMAP or a KSYMBOL. A system-wide
 * recording maps files all the time; dropping every space on each MMAP left
 * the caches nearly empty.
 */
export class TextCache {
  private arena = Buffer.allocUnsafe(1 << 16);
  /** The arena as a DataView: texts are copied out four bytes a step (io/byte-copy.ts). */
  private arenaView = viewOf(this.arena);
  private pos = 0;
  private hiOf: Int32Array = new Int32Array(4096);
  private startOf: Int32Array = new Int32Array(4096);
  private lenOf: Int32Array = new Int32Array(4096);
  private count = 0;
  private readonly kernel = new Map<number, number>();
  private readonly users = new Map<number, Map<number, number>>();
  private lastPid = Number.NaN;
  private lastUser: Map<number, number> | undefined;

  /** The texts of the kernel's addresses, or of process `pid`'s. */
  space(kernel: boolean, pid: number): Map<number, number> {
    if (kernel) return this.kernel;
    if (pid === this.lastPid && this.lastUser) return this.lastUser;
    let m = this.users.get(pid);
    if (m === undefined) {
      m = new Map();
      this.users.set(pid, m);
    }
    this.lastPid = pid;
    this.lastUser = m;
    return m;
  }

  /** Forget the texts of one space (a pid, or KERNEL_SPACE). */
  invalidate(space: number): void {
    if (space === KERNEL_SPACE) this.kernel.clear();
    else {
      this.users.delete(space);
      if (space === this.lastPid) this.lastUser = undefined;
    }
  }

  /** Copy the text cached in `m` for the address (h, l) (int32 halves) to `out`; false when none is. */
  put(out: ByteText, m: Map<number, number>, h: number, l: number): boolean {
    const e = m.get(l);
    if (e === undefined || this.hiOf[e] !== h) return false;
    out.copyFrom(this.arenaView, this.startOf[e]!, this.lenOf[e]!);
    return true;
  }

  /** Keep `text` for the address (h, l) in `m` (m from `space`, asked again after this call). */
  add(m: Map<number, number>, h: number, l: number, text: string): void {
    if (this.count >= ENTRIES_MAX) {
      this.clear();
      return;
    }
    const need = text.length * 3;
    if (this.pos + need > this.arena.length) {
      if (this.pos + need > ARENA_MAX) {
        this.clear();
        return;
      }
      const a = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.pos + need));
      this.arena.copy(a, 0, 0, this.pos);
      this.arena = a;
      this.arenaView = viewOf(a);
    }
    if (this.count === this.hiOf.length) {
      const n = this.count * 2;
      this.hiOf = grow(this.hiOf, n);
      this.startOf = grow(this.startOf, n);
      this.lenOf = grow(this.lenOf, n);
    }
    const e = this.count++;
    this.hiOf[e] = h;
    this.startOf[e] = this.pos;
    const len = this.arena.write(text, this.pos, 'utf8');
    this.lenOf[e] = len;
    this.pos += len;
    m.set(l, e);
  }

  private clear(): void {
    this.kernel.clear();
    this.users.clear();
    this.lastUser = undefined;
    this.pos = 0;
    this.count = 0;
  }
}

function grow(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/** The callchain lines of samples, cached per address space (TextCache). */
export class ChainLines {
  private readonly cache = new TextCache();

  /** Forget the lines of one space (a pid, or KERNEL_SPACE). */
  invalidate(space: number): void {
    this.cache.invalidate(space);
  }

  /**
   * The lines of the `nr` entries at `b[at…]` (u64s in record byte order), or
   * false (nothing written) when the chain needs the general path: an unknown
   * context marker, which makes perf drop the whole chain.
   */
  write(out: ByteText, b: Uint8Array, at: number, nr: number, le: boolean, pid: number, ctx: ChainContext): boolean {
    const lo = le ? 0 : 4;
    const hi = le ? 4 : 0;
    // perf drops the whole chain at an unknown marker: look for one before printing anything
    for (let i = 0, o = at; i < nr; i++, o += 8) {
      if (i32(b, o + hi, le) !== -1) continue;
      const l = i32(b, o + lo, le);
      if (l >= CONTEXT_MAX && l < 0 && !KNOWN_CONTEXTS.has(l)) return false;
    }
    const cache = this.cache;
    let user = true; // perf starts in PERF_RECORD_MISC_USER
    let printed = 0;
    for (let i = 0, o = at; i < nr && printed < ctx.maxStack; i++, o += 8) {
      const h = i32(b, o + hi, le);
      const l = i32(b, o + lo, le);
      if (h === -1 && l >= CONTEXT_MAX && l < 0) {
        user = l === CONTEXT_USER; // KERNEL and the other known markers: not user space
        continue;
      }
      printed++;
      // no symbol columns: a kernel address prints alone, a user one as its map offset (pid-dependent)
      const m = cache.space(!user, pid);
      if (cache.put(out, m, h, l)) continue;
      // the kernel map is fixed up on the first kernel lookup (ScriptSymbols.fixupKernelMap): not cached before
      const settled = user || ctx.syms === undefined || ctx.syms.kernelSettled;
      const ip = (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0);
      const addr = user ? ctx.printed(pid, ip) : ip;
      const sym = ctx.cols && ctx.syms ? ctx.syms.text(ctx.cols, pid, ip, !user) : '';
      const text = `\t${addr.toString(16).padStart(16)}${sym}\n`;
      out.str(text);
      if (settled) cache.add(cache.space(!user, pid), h, l, text);
    }
    return true;
  }
}

/** The u32 at `o` as an int32 (a small integer: no heap number for values past 2^31). */
function i32(b: Uint8Array, o: number, le: boolean): number {
  return le
    ? b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)
    : (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
}
