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
import type { ScriptSymbols, SymbolColumns } from './script-symbols.js';

/** The address-space switches perf's callchains carry (PERF_CONTEXT_*), as the low u32 of a u64 whose high u32 is ~0. */
const CONTEXT_MAX_LO = 0x1_0000_0000 - 4095;
const CONTEXT_USER_LO = 0x1_0000_0000 - 512;
const KNOWN_CONTEXTS = new Set([-32, -128, -512, -2048, -2176, -2560].map((x) => 0x1_0000_0000 + x));

/** One cached entry line, for the address whose high half is `hi`. */
interface EntryText {
  hi: number;
  bytes: Uint8Array;
}

/** What a chain's lines depend on beside the addresses. */
export interface ChainContext {
  cols: SymbolColumns | undefined;
  syms: ScriptSymbols | undefined;
  /** --max-stack (perf's default: 127). */
  maxStack: number;
  /** UserMaps.printedAddress: a user address as its offset in the mapped file. */
  printed: (pid: number, ip: bigint) => bigint;
}

/** Copy `a` in (a loop: most pieces are shorter than a call into TypedArray.set is worth). */
export function putBytes(out: ByteText, a: Uint8Array): void {
  const n = a.length;
  out.reserve(n);
  const b = out.buf;
  let k = out.length;
  if (n > 64) b.set(a, k);
  else for (let i = 0; i < n; i++) b[k + i] = a[i]!;
  k += n;
  out.length = k;
}

/** The cache key of kernel addresses (pids are 32-bit: never this). */
export const KERNEL_SPACE = -(2 ** 40);

/**
 * Per-run caches of entry lines, keyed by address space (KERNEL_SPACE, else
 * the pid) then the address's low half. A space is dropped when what its
 * lines depend on may change (`invalidate`): a process's on its MMAP, MMAP2
 * or FORK, the kernel's on a kernel MMAP or a KSYMBOL. A system-wide
 * recording maps files all the time; dropping every space on each MMAP left
 * the caches nearly empty.
 */
export class ChainLines {
  private spaces = new Map<number, Map<number, EntryText>>();
  private lastKey = Number.NaN;
  private lastSpace: Map<number, EntryText> | undefined;
  private readonly enc = new TextEncoder();

  /** Forget the lines of one space (a pid, or KERNEL_SPACE). */
  invalidate(space: number): void {
    this.spaces.delete(space);
    if (space === this.lastKey) {
      this.lastKey = Number.NaN;
      this.lastSpace = undefined;
    }
  }

  private space(key: number): Map<number, EntryText> {
    if (key === this.lastKey && this.lastSpace) return this.lastSpace;
    let m = this.spaces.get(key);
    if (m === undefined) {
      m = new Map();
      this.spaces.set(key, m);
    }
    this.lastKey = key;
    this.lastSpace = m;
    return m;
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
      if (u32(b, o + hi, le) !== 0xffffffff) continue;
      const l = u32(b, o + lo, le);
      if (l >= CONTEXT_MAX_LO && !KNOWN_CONTEXTS.has(l)) return false;
    }
    let user = true; // perf starts in PERF_RECORD_MISC_USER
    let printed = 0;
    for (let i = 0, o = at; i < nr && printed < ctx.maxStack; i++, o += 8) {
      const h = u32(b, o + hi, le);
      const l = u32(b, o + lo, le);
      if (h === 0xffffffff && l >= CONTEXT_MAX_LO) {
        user = l === CONTEXT_USER_LO; // KERNEL and the other known markers: not user space
        continue;
      }
      printed++;
      // no symbol columns: a kernel address prints alone, a user one as its map offset (pid-dependent)
      const m = this.space(user ? pid : KERNEL_SPACE);
      const hit = m.get(l);
      if (hit !== undefined && hit.hi === h) {
        putBytes(out, hit.bytes);
        continue;
      }
      // the kernel map is fixed up on the first kernel lookup (ScriptSymbols.fixupKernelMap): not cached before
      const settled = user || ctx.syms === undefined || ctx.syms.kernelSettled;
      const ip = (BigInt(h) << 32n) | BigInt(l);
      const addr = user ? ctx.printed(pid, ip) : ip;
      const sym = ctx.cols && ctx.syms ? ctx.syms.text(ctx.cols, pid, ip, !user) : '';
      const bytes = this.enc.encode(`\t${addr.toString(16).padStart(16)}${sym}\n`);
      if (settled && m.size < 1 << 16) m.set(l, { hi: h, bytes });
      putBytes(out, bytes);
    }
    return true;
  }
}

function u32(b: Uint8Array, o: number, le: boolean): number {
  return le
    ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0
    : ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}
