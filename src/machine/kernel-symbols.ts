/**
 * Which kernel symbols perf 6.1 finds once it has loaded the kernel map of a
 * `perf record --kcore` recording (tools/perf/util/symbol.c):
 *
 * - perf uses kcore_dir/kcore only when every module map of the recording
 *   (the `[name]` MMAPs) is listed in kcore_dir/modules at the same address
 *   (validate_kcore_modules). Then kallsyms symbols are kept only inside the
 *   kcore's executable segments (dso__split_kallsyms_for_kcore).
 * - Otherwise (an empty or stale `modules`) perf falls back to kallsyms alone
 *   (dso__split_kallsyms): kernel symbols go to the kernel map, a module's
 *   symbols to the map of that module, and symbols of modules without a map
 *   (e.g. `[__builtin__ftrace]` trampolines) are discarded.
 *
 * Addresses no kernel or module map covers are left to KSYMBOL maps (BPF
 * programs, trampolines), which the caller tracks in event order.
 */
import type { KcoreDir } from './kcore-dir.js';
import type { SymbolTable } from './symbols.js';
import { kallsymsTable } from './kallsyms-table.js';

export interface KernelMapRecord {
  start: bigint;
  end: bigint;
  filename: string;
}

export interface KernelSymbolModel {
  /** true: perf maps the kcore (validate_kcore_modules passed); false: kallsyms alone. */
  usesKcore: boolean;
  /** The symbols perf keeps in that mode. */
  symbols: SymbolTable;
  /** In kcore mode: the executable kcore segments. */
  segments: { start: bigint; end: bigint }[];
  /** In kallsyms mode: the kernel map ([kernel.kallsyms]) and the module maps, by module name. */
  kernelMap?: { start: bigint; end: bigint };
  moduleMaps: { name: string; start: bigint; end: bigint }[];
}

const isKernelText = (f: string): boolean => f.startsWith('[kernel.kallsyms]');
const moduleName = (f: string): string | undefined => /^\[([^\]]+)\]$/.exec(f)?.[1];

/** perf's validate_kcore_modules: each module map must be in kcore_dir/modules at its address. */
export function perfUsesKcore(kcore: KcoreDir, kernelMaps: readonly KernelMapRecord[]): boolean {
  for (const m of kernelMaps) {
    if (isKernelText(m.filename)) continue;
    const name = moduleName(m.filename);
    if (name === undefined) continue;
    if (!kcore.modules.some((e) => e.name === name && e.addr === m.start)) return false;
  }
  return true;
}

export function kernelSymbolModel(kcore: KcoreDir, kernelMaps: readonly KernelMapRecord[]): KernelSymbolModel {
  const segments = kcore.segments.map((s) => ({ start: s.vaddr, end: s.vaddr + BigInt(s.bytes.length) }));
  const k = kernelMaps.find((m) => isKernelText(m.filename));
  const moduleMaps: KernelSymbolModel['moduleMaps'] = [];
  for (const m of kernelMaps) {
    const name = isKernelText(m.filename) ? undefined : moduleName(m.filename);
    if (name !== undefined) moduleMaps.push({ name, start: m.start, end: m.end });
  }
  const usesKcore = perfUsesKcore(kcore, kernelMaps);
  return {
    usesKcore,
    symbols: usesKcore ? kcore.symbols : kallsymsTable(kcore.kallsyms, []),
    segments,
    kernelMap: k ? { start: k.start, end: k.end } : undefined,
    moduleMaps,
  };
}

/**
 * The symbol perf finds at addr after loading the kernel map: a symbol,
 * undefined (a map covers addr but has no symbol there), or 'no-map' (no
 * kernel or module map covers it: a KSYMBOL map may).
 */
export function loadedKernelSymbol(
  model: KernelSymbolModel,
  addr: bigint,
): { name: string; start: bigint } | undefined | 'no-map' {
  const within = (r: { start: bigint; end: bigint }) => addr >= r.start && addr < r.end;
  if (model.usesKcore) {
    if (model.segments.length === 0) return model.symbols.find(addr) ?? 'no-map';
    return model.segments.some(within) ? model.symbols.find(addr) : 'no-map';
  }
  const mod = model.moduleMaps.find(within);
  if (mod) {
    const s = model.symbols.find(addr);
    return s && s.module === mod.name ? s : undefined;
  }
  if (model.kernelMap && within(model.kernelMap)) {
    const s = model.symbols.find(addr);
    return s && s.module === undefined ? s : undefined;
  }
  return 'no-map';
}
