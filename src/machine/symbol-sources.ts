/**
 * The files perf 6.1 tries, in order, for a user dso's symbols (util/symbol.c
 * dso__load over binary_type_symtab[], util/dso.c
 * dso__read_binary_type_filename), for the kinds that name a user-space file:
 *
 * 1. DEBUGLINK: the name in the dso's `.gnu_debuglink` section, looked up as
 *    given (relative to the working directory), beside the dso, in its
 *    `.debug/` directory, then under `/usr/lib/debug<dir>/`: the first that
 *    exists is the candidate.
 * 2. BUILD_ID_CACHE and BUILD_ID_CACHE_DEBUGINFO: `~/.debug/.build-id/xx/…/
 *    elf` and `…/debug` (and the cache's per-path copies).
 * 3. FEDORA_DEBUGINFO `/usr/lib/debug<path>.debug`, UBUNTU_DEBUGINFO
 *    `/usr/lib/debug<path>`, BUILDID_DEBUGINFO
 *    `/usr/lib/debug/.build-id/xx/<rest>.debug` (what Debian's -dbg and
 *    dbgsym packages install).
 * 4. SYSTEM_PATH_DSO: the path itself.
 *
 * dso__load takes its symbols from the first candidate with a `.symtab`
 * and its PLT from the first with a real `.dynsym` (the runtime file).
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cstr, elfSections } from './elf-sections.js';

const SHT_NOBITS = 8;

function isRegularFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** A file's bytes, or undefined when it cannot be read (the caller may keep them for the next step). */
export type ReadFile = (path: string) => Uint8Array | undefined;

export function readBytes(path: string): Uint8Array | undefined {
  try {
    const b = readFileSync(path);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch {
    return undefined;
  }
}

/**
 * The file name in an ELF64 little-endian file's `.gnu_debuglink` section
 * (a NUL-terminated name, then a CRC perf does not check), or undefined.
 */
export function debuglinkName(view: Uint8Array | undefined): string | undefined {
  if (!view) return undefined;
  const s = elfSections(view)?.secs.find((x) => x.name === '.gnu_debuglink' && x.type !== SHT_NOBITS);
  if (!s || s.size === 0 || s.offset + s.size > view.length) return undefined;
  const name = cstr(view, s.offset);
  return name.length > 0 ? name : undefined;
}

/** DEBUGLINK's candidate: the first existing of perf's debuglink_paths[] for the dso's link name. */
function debuglinkCandidate(filename: string, read: ReadFile): string | undefined {
  if (!isRegularFile(filename)) return undefined;
  const link = debuglinkName(read(filename));
  if (link === undefined) return undefined;
  const dir = dirname(filename);
  for (const p of [link, join(dir, link), join(dir, '.debug', link), `/usr/lib/debug${dir}/${link}`])
    if (isRegularFile(p)) return p;
  return undefined;
}

/** A candidate file; `debug`: a separate debug-info file (its PT_LOADs are not the mapped file's). */
export interface SymbolSource {
  path: string;
  debug: boolean;
}

/**
 * Candidate files for a user dso's symbols, in perf's order (see above).
 * `bid`: the dso's build-id (hex), when it has one; `cacheDir`: ~/.debug.
 * Files that do not exist are left in: the caller skips them. `read`: how
 * the dso itself is read for its debuglink (the caller's, to read it once).
 */
export function symbolSources(
  filename: string,
  bid: string | undefined,
  cacheDir: string,
  read: ReadFile = readBytes,
): SymbolSource[] {
  const out: SymbolSource[] = [];
  const add = (path: string, debug: boolean): void => {
    out.push({ path, debug });
  };
  const abs = filename.startsWith('/');
  const link = abs ? debuglinkCandidate(filename, read) : undefined;
  if (link !== undefined) add(link, true);
  if (bid !== undefined) {
    // the .build-id link may name another path's copy
    const base = filename === '[vdso]' ? 'vdso' : 'elf';
    const idLink = join(cacheDir, '.build-id', bid.slice(0, 2), bid.slice(2));
    const dir = join(cacheDir, filename, bid);
    add(join(idLink, base), false);
    add(join(idLink, 'debug'), true);
    add(join(dir, base), false);
    add(join(dir, 'debug'), true);
  }
  if (abs) {
    add(`/usr/lib/debug${filename}.debug`, true);
    add(`/usr/lib/debug${filename}`, true);
    if (bid !== undefined) add(`/usr/lib/debug/.build-id/${bid.slice(0, 2)}/${bid.slice(2)}.debug`, true);
    add(filename, false);
  }
  return out;
}
