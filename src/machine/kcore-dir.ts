import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readElfCore, PF_X, type CoreSegment } from './elf-core.js';
import { type Kallsyms, parseKallsyms, readKallsymsText } from './kallsyms.js';
import { parseModules, type ModuleEntry } from './modules.js';
import type { SymbolTable } from './symbols.js';
import { kallsymsTable } from './kallsyms-table.js';
import { perfDataPath } from '../perfdata/input-path.js';

/**
 * A `perf record --kcore` directory:
 *
 *   DIR/data                 the perf.data file
 *   DIR/kcore_dir/kcore      ELF64 core: PT_LOAD per kernel/module text range
 *   DIR/kcore_dir/kallsyms   /proc/kallsyms at record time
 *   DIR/kcore_dir/modules    /proc/modules at record time
 *
 * perf reads kcore_dir only when given the directory (`-i DIR`) and only when
 * `modules` exists; we follow the same rule, so what perfpoke symbolizes is
 * what perf symbolizes.
 */
export interface KcoreDir {
  dir: string;
  /** Executable PT_LOAD segments (perf maps only those for kernel text). */
  segments: CoreSegment[];
  kallsyms: Kallsyms;
  modules: ModuleEntry[];
  symbols: SymbolTable;
  /** Address of `_text`, which must equal the kernel MMAP's pgoff. */
  textAddr?: bigint;
}

/** Paths inside a perf.data directory or beside a file given with -i. */
export function resolveInput(input: string): { dataFile: string; kcoreDir?: string } {
  const dataFile = perfDataPath(input); // throws the one-line error for a missing path or an empty directory
  if (dataFile === input) return { dataFile };
  const k = join(input, 'kcore_dir');
  return { dataFile, kcoreDir: existsSync(join(k, 'modules')) && existsSync(join(k, 'kcore')) ? k : undefined };
}

/**
 * Load kcore_dir (the folder holding kcore, kallsyms and modules). Throws
 * FormatError for a malformed kcore, a Node fs error for a missing file.
 */
export function loadKcoreDir(kcoreDir: string): KcoreDir {
  const kcorePath = join(kcoreDir, 'kcore');
  const file = readFileSync(kcorePath);
  const segments = readElfCore(new Uint8Array(file.buffer, file.byteOffset, file.byteLength), kcorePath).filter(
    (s) => s.flags & PF_X,
  );
  const kallsyms = existsSync(join(kcoreDir, 'kallsyms'))
    ? parseKallsyms(readKallsymsText(join(kcoreDir, 'kallsyms')))
    : parseKallsyms('');
  const modules = existsSync(join(kcoreDir, 'modules'))
    ? parseModules(readFileSync(join(kcoreDir, 'modules'), 'utf8'))
    : [];
  const maps = segments.map((s) => ({ start: s.vaddr, end: s.vaddr + BigInt(s.bytes.length) }));
  return {
    dir: kcoreDir,
    segments,
    kallsyms,
    modules,
    symbols: kallsymsTable(kallsyms, maps),
    textAddr: kallsyms.find('_text'),
  };
}
