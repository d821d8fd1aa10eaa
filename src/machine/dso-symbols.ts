/**
 * Where perf 6.1 finds the symbols of a dso when `perf script` runs on this
 * machine, and those symbols (loaded once per dso, on first use):
 *
 * - the kernel: a recording's kcore_dir kallsyms; else `/proc/kallsyms` when
 *   the recording's [kernel.kallsyms] build-id (HEADER_BUILD_ID) is the
 *   running kernel's (/sys/kernel/notes) or the recording names none (pipe
 *   mode); else the build-id cache's
 *   `~/.debug/[kernel.kallsyms]/<id>/kallsyms`. Symbols of modules without
 *   a module map are dropped, as dso__split_kallsyms does.
 * - user files: perf's candidates in its order (symbol-sources.ts: the
 *   debuglink file, the build-id cache's `elf` and `debug`, the
 *   `/usr/lib/debug` files that -dbg and dbgsym packages install, then the
 *   path itself): symbols from the first that has a `.symtab`, else from
 *   the first ELF there (`.dynsym`), and the PLT from the first with a real
 *   `.dynsym`; a candidate whose build-id differs from the recorded one is
 *   not used (perf: "build id mismatch"). A file the header names no build-id
 *   for takes the build-id of the file at its path, as perf's dso__load does.
 *   `[vdso]`: `~/.debug/[vdso]/<id>/vdso`.
 */
import { decodeFeature } from '../perfdata/features/codec.js';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Feature } from '../abi/feature.js';
import type { FeatureData } from '../perfdata/features/types.js';
import { isFormatError } from '../io/errors.js';
import type { PerfFile } from '../perfdata/perf-file.js';
import { type InsertOrder, type LoadSegment, loadSegments, readElfSymbols } from './elf-symbols.js';
import { treeSymbolTable } from './symbol-tree.js';
import { parseKallsyms, readKallsymsText } from './kallsyms.js';
import { kallsymsTable } from './kallsyms-table.js';
import { type KernelSymbol, lastStartingBy, SymbolTable } from './symbols.js';
import { DsoUnwindTables } from './unwind-elf.js';
import { hasRealDynsym, pltSymbols } from './elf-plt.js';
import { type ReadFile, type SymbolSource, symbolSources } from './symbol-sources.js';
import { readElfParts } from './elf-parts.js';

/**
 * The file's symbols and perf's synthesized `name@plt` ones. perf inserts
 * the PLT symbols after extending zero-size symbols to their successor, so
 * one may lie inside `_init`, and sized symbols can overlap too; where any
 * do, a lookup returns what perf's tree search meets first (symbol-tree.ts):
 * `_init+0x50` for rand@plt in a small program, `name@plt` in a library
 * with 1 390 PLT entries, a builtin around a label in node. Where none
 * overlap, the sorted columns answer the same.
 */
function withPlt(syms: KernelSymbol[], plt: KernelSymbol[] | undefined, order: InsertOrder): SymbolTable {
  const list = plt ?? [];
  let overlap = false;
  for (let i = 1; i < syms.length && !overlap; i++) overlap = syms[i - 1]!.end > syms[i]!.start;
  if (!overlap) overlap = list.some((p) => holds(syms, p.start) || holds(syms, p.end - 1n));
  const tree = overlap ? treeSymbolTable(syms, order, list) : undefined;
  if (tree) return tree;
  return SymbolTable.columns(
    list.length ? [...syms, ...list].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0)) : syms,
  );
}

/** Whether a symbol of `sorted` (by start, none overlapping) holds `addr`, as SymbolTable.find answers. */
function holds(sorted: readonly KernelSymbol[], addr: bigint): boolean {
  const s = sorted[lastStartingBy(sorted, addr)];
  return s !== undefined && (addr < s.end || (addr === s.start && s.start === s.end));
}

export interface DsoSymbolOptions {
  /** filename → build-id (lowercase hex), from HEADER_BUILD_ID and MMAP2 records. */
  buildIds: Map<string, string>;
  /** The build-id cache (perf: ~/.debug). */
  cacheDir?: string;
  /** Kernel symbols already loaded (a kcore_dir recording). */
  kernel?: SymbolTable;
}

export class DsoSymbols {
  private readonly cache = new Map<string, SymbolTable | null>();
  private kernelTable: SymbolTable | null | undefined;
  private readonly cacheDir: string;

  constructor(private readonly opts: DsoSymbolOptions) {
    this.cacheDir = opts.cacheDir ?? join(homedir(), '.debug');
    if (opts.kernel) this.kernelTable = opts.kernel;
  }

  private unwind: DsoUnwindTables | undefined;
  private readonly symsrc = new Map<string, string>();
  /**
   * The file the dso's symbols came from when it has a .symtab (perf's
   * symsrc_filename), else the dso's own name (its long name); perf asks
   * addr2line about this file.
   */
  symsrcFile(filename: string): string {
    this.user(filename);
    return this.symsrc.get(filename) ?? filename;
  }
  /** The unwind tables of user files, found where perf finds their data (dwarf callchains). */
  unwindTables(): DsoUnwindTables {
    this.unwind ??= new DsoUnwindTables(this.opts.buildIds, this.cacheDir);
    return this.unwind;
  }

  /** The kernel symbols came from a kcore_dir (perf's maps are then kcore's segments). */
  get kernelFromKcore(): boolean {
    return this.opts.kernel !== undefined;
  }

  /** The kernel's symbols, or undefined when perf would find none either. */
  kernel(): SymbolTable | undefined {
    if (this.kernelTable === undefined) this.kernelTable = this.loadKernel() ?? null;
    return this.kernelTable ?? undefined;
  }

  private loadKernel(): SymbolTable | undefined {
    const bid = this.opts.buildIds.get('[kernel.kallsyms]');
    let text: string | undefined;
    // dso__find_kallsyms: a kernel without a recorded build-id (pipe mode, --no-buildid) is taken as this host's
    if (bid === undefined || hostKernelBuildId() === bid) text = tryReadKallsyms('/proc/kallsyms');
    if (text === undefined && bid !== undefined)
      text = tryReadKallsyms(join(this.cacheDir, '[kernel.kallsyms]', bid, 'kallsyms'));
    if (text === undefined) return undefined;
    return kallsymsTable(parseKallsyms(text), [], { kernelOnly: true });
  }

  /** Symbols of a user-space file (perf's dso long name), or undefined. */
  user(filename: string): SymbolTable | undefined {
    let t = this.cache.get(filename);
    if (t === undefined) {
      t = this.loadUser(filename) ?? null;
      this.cache.set(filename, t);
    }
    return t ?? undefined;
  }

  private loadUser(filename: string): SymbolTable | undefined {
    // dso__load: a dso the header gives no build-id takes the one of the file at its path
    // a file is read once here, however many of the steps below look at it (the dso itself: build-id,
    // debuglink, PT_LOADs and symbols)
    const files = new Map<string, Uint8Array | undefined>();
    const read = (p: string): Uint8Array | undefined => {
      if (!files.has(p)) files.set(p, readElfParts(p));
      return files.get(p);
    };
    const own = filename.startsWith('/') ? read(filename) : undefined;
    const bid = this.opts.buildIds.get(filename) ?? (own ? readElfSymbols(own)?.buildId : undefined);
    if (filename === '[vdso]' && bid === undefined) {
      // no recorded build-id (pipe mode): perf takes the host's vDSO, a copy of its own [vdso] mapping
      const own = ownVdso();
      const elf = own ? readElfSymbols(own) : undefined;
      return elf ? SymbolTable.of(elf.symbols) : undefined;
    }
    const sources = symbolSources(filename, bid, this.cacheDir, read).filter((c) => existsSync(c.path));
    const runtime = runtimeSegments(sources, read);
    // dso__load: symbols from the first candidate with a .symtab, the PLT from the first runtime file
    // (one with a real .dynsym); it stops once it has both
    let syms: KernelSymbol[] | undefined;
    let fallback: KernelSymbol[] | undefined;
    let symsOrder: InsertOrder | undefined;
    let fallbackOrder: InsertOrder | undefined;
    let plt: KernelSymbol[] | undefined;
    let runtimeSeen = false;
    for (const { path: p } of sources) {
      const view = read(p);
      if (!view) continue;
      const elf = readElfSymbols(view, runtime);
      if (!elf) continue;
      if (bid !== undefined && elf.buildId !== undefined && elf.buildId !== bid) continue;
      if (!runtimeSeen && hasRealDynsym(view)) {
        runtimeSeen = true;
        const p2 = pltSymbols(view);
        if (p2.length > 0) plt = p2;
      }
      if (syms === undefined && elf.fromSymtab) {
        this.symsrc.set(filename, p);
        syms = elf.symbols;
        symsOrder = elf.order;
      } else if (fallback === undefined) {
        fallback = elf.symbols;
        fallbackOrder = elf.order;
      }
      if (syms !== undefined && runtimeSeen) break;
    }
    const chosen = syms ?? fallback;
    const order = (syms ? symsOrder : fallbackOrder) ?? { starts: [], dropped: [] };
    const table = chosen ? withPlt(...demangleWithPlt(chosen, plt), order) : undefined;
    for (const b of files.values()) if (b) release(b);
    return table;
  }
}

/**
 * Free a file's bytes now that its symbols are copied out (names are
 * strings; nothing keeps a view). An array as long as a 100 MB binary has
 * lived through a few young GCs by the end of its load, so it would wait for a
 * full GC; moved (transferred) into a fresh clone, it goes at the next young
 * one. `script` on a `-a -g` recording of node: peak RSS 247 → 229 MB.
 */
function release(b: Uint8Array): void {
  if (b.buffer instanceof ArrayBuffer && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength)
    structuredClone(b.buffer, { transfer: [b.buffer] });
}

const PERF_RECORD_MISC_BUILD_ID_SIZE = 1 << 15;

/**
 * filename → build-id from the file's HEADER_BUILD_ID (20 bytes, or the size
 * the entry gives). A malformed entry ends the list there and the entries
 * before it stay: perf_header__read_build_ids adds each entry as it reads it,
 * and perf_file_section__process only notes "Failed to read buildids,
 * continuing...".
 */
export async function recordedBuildIds(file: PerfFile): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const bytes = await file.readFeature(Feature.BUILD_ID);
  if (!bytes) return out;
  let f: FeatureData;
  try {
    f = decodeFeature(Feature.BUILD_ID, bytes, file.le, 0);
  } catch (e) {
    if (!isFormatError(e)) throw e;
    f = decodeFeature(Feature.BUILD_ID, bytes.subarray(0, e.offset), file.le, 0);
  }
  if (f.kind !== 'build_id') return out;
  for (const e of f.entries) {
    const size = e.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? (e.buildId[20] ?? 20) : 20;
    out.set(e.filename, Buffer.from(e.buildId.subarray(0, Math.min(size, 20))).toString('hex'));
  }
  return out;
}

/** Names per c++filt run (see demangle). */
const DEMANGLE_BATCH = 8192;

/**
 * C++ names as perf prints them: libiberty's cplus_demangle with no
 * options (no parameters, and `std::ostream` for the standard substitution
 * `So`, not its full `std::basic_ostream<char, …>`), which is what binutils'
 * `c++filt -p -i` runs, DEMANGLE_BATCH names per run: a 100 MB binary has
 * 73 k mangled names, and c++filt's whole input and output at once (strings
 * and buffers) added ~20 MB to script's peak.
 * Without c++filt (or when a run fails) the names stay mangled.
 */
function demangle(symbols: KernelSymbol[]): KernelSymbol[] {
  const mangled = symbols.filter((s) => s.name.startsWith('_Z'));
  const names: string[] = [];
  for (let from = 0; from < mangled.length; from += DEMANGLE_BATCH) {
    const r = spawnSync('c++filt', ['-p', '-i'], {
      input: mangled
        .slice(from, from + DEMANGLE_BATCH)
        .map((s) => s.name)
        .join('\n'),
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    if (r.error || r.status !== 0) return symbols;
    const lines = r.stdout.split('\n');
    for (let i = 0; i < Math.min(DEMANGLE_BATCH, mangled.length - from); i++) names.push(lines[i] ?? '');
  }
  mangled.forEach((s, i) => {
    const n = names[i];
    if (n) s.name = n;
  });
  return symbols;
}

/**
 * The file's symbols demangled, and its PLT entries as `name@plt` with the
 * name demangled, as dso__synthesize_plt_symbols names them (demangle_sym,
 * then "%s@plt"): `operator new@plt` for `_Znwm`. One c++filt run for both.
 */
function demangleWithPlt(
  symbols: KernelSymbol[],
  plt: KernelSymbol[] | undefined,
): [KernelSymbol[], KernelSymbol[] | undefined] {
  const bare = plt?.map((p) => ({ ...p, name: p.name.slice(0, -'@plt'.length) }));
  demangle(bare ? [...symbols, ...bare] : symbols); // in place: the objects of both lists get their names
  return [symbols, bare?.map((p) => ({ ...p, name: `${p.name}@plt` }))];
}

/** /tmp/perf-PID.map (JIT symbols: "start size name" in hex) for an anonymous map, as perf reads it. */
export function perfMapSymbols(path: string): SymbolTable | undefined {
  const text = tryRead(path);
  if (text === undefined) return undefined;
  const syms: KernelSymbol[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const start = BigInt(`0x${m[1]}`);
    syms.push({ start, end: start + BigInt(`0x${m[2]}`), name: m[3]! });
  }
  syms.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return SymbolTable.of(syms);
}

/** The PT_LOAD segments of the first candidate that is not a debug-info file: the file that was mapped. */
function runtimeSegments(sources: readonly SymbolSource[], read: ReadFile): LoadSegment[] | undefined {
  for (const { path: p, debug } of sources) {
    if (debug) continue;
    const b = read(p); // unreadable: the next candidate
    if (b) return loadSegments(b);
  }
  return undefined;
}

function tryReadKallsyms(path: string): string | undefined {
  try {
    return readKallsymsText(path);
  } catch {
    return undefined;
  }
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

let hostBid: string | null | undefined;

/** The running kernel's build-id from /sys/kernel/notes (NT_GNU_BUILD_ID), cached. */
export function hostKernelBuildId(): string | undefined {
  if (hostBid === undefined) {
    hostBid = null;
    try {
      const b = readFileSync('/sys/kernel/notes');
      for (let o = 0; o + 12 <= b.length; ) {
        const namesz = b.readUInt32LE(o);
        const descsz = b.readUInt32LE(o + 4);
        const type = b.readUInt32LE(o + 8);
        const desc = o + 12 + ((namesz + 3) & ~3);
        if (type === 3 && b.toString('latin1', o + 12, o + 15) === 'GNU') {
          hostBid = b.subarray(desc, desc + descsz).toString('hex');
          break;
        }
        o = desc + ((descsz + 3) & ~3);
      }
    } catch {
      // no /sys/kernel/notes: no host build-id, perf does not use /proc/kallsyms then
    }
  }
  return hostBid ?? undefined;
}

/** This process's vDSO image (perf's vdso__dso_findnew copies its own [vdso] mapping), or undefined. */
function ownVdso(): Uint8Array | undefined {
  try {
    const m = /^([0-9a-f]+)-([0-9a-f]+) .*\[vdso\]$/m.exec(readFileSync('/proc/self/maps', 'utf8'));
    if (!m?.[1] || !m[2]) return undefined;
    const start = Number.parseInt(m[1], 16);
    const buf = Buffer.alloc(Number.parseInt(m[2], 16) - start);
    const fd = openSync('/proc/self/mem', 'r');
    try {
      readSync(fd, buf, 0, buf.length, start);
    } finally {
      closeSync(fd);
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } catch {
    return undefined;
  }
}
