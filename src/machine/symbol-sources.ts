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
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const SHT_NOBITS = 8;

function isRegularFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function readAt(fd: number, pos: number, len: number): Uint8Array {
  const b = new Uint8Array(len);
  const n = readSync(fd, b, 0, len, pos);
  return b.subarray(0, n);
}

/**
 * The file name in an ELF64 little-endian file's `.gnu_debuglink` section
 * (a NUL-terminated name, then a CRC perf does not check), or undefined.
 * Reads only the section headers and the two sections it needs.
 */
export function readDebuglink(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const eh = readAt(fd, 0, 64);
    if (eh.length < 64 || eh[0] !== 0x7f || eh[1] !== 0x45 || eh[2] !== 0x4c || eh[3] !== 0x46) return undefined;
    if (eh[4] !== 2 || eh[5] !== 1) return undefined;
    const dv = new DataView(eh.buffer, eh.byteOffset, eh.byteLength);
    const shoff = Number(dv.getBigUint64(40, true));
    const shentsize = dv.getUint16(58, true);
    const shnum = dv.getUint16(60, true);
    const shstrndx = dv.getUint16(62, true);
    if (shoff === 0 || shentsize < 64 || shstrndx >= shnum || shnum > 0xff00) return undefined;
    const sh = readAt(fd, shoff, shnum * shentsize);
    if (sh.length < shnum * shentsize) return undefined;
    const sv = new DataView(sh.buffer, sh.byteOffset, sh.byteLength);
    const sec = (i: number) => ({
      name: sv.getUint32(i * shentsize, true),
      type: sv.getUint32(i * shentsize + 4, true),
      offset: Number(sv.getBigUint64(i * shentsize + 24, true)),
      size: Number(sv.getBigUint64(i * shentsize + 32, true)),
    });
    const strs = sec(shstrndx);
    if (strs.size > 1 << 24) return undefined;
    const names = readAt(fd, strs.offset, strs.size);
    const want = Buffer.from('.gnu_debuglink\0', 'latin1');
    for (let i = 0; i < shnum; i++) {
      const s = sec(i);
      if (s.type === SHT_NOBITS || s.size === 0 || s.size > 4096) continue;
      if (Buffer.compare(names.subarray(s.name, s.name + want.length), want) !== 0) continue;
      const body = readAt(fd, s.offset, s.size);
      const end = body.indexOf(0);
      const name = Buffer.from(body.subarray(0, end < 0 ? body.length : end)).toString('latin1');
      return name.length > 0 ? name : undefined;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** DEBUGLINK's candidate: the first existing of perf's debuglink_paths[] for the dso's link name. */
function debuglinkCandidate(filename: string): string | undefined {
  if (!isRegularFile(filename)) return undefined;
  const link = readDebuglink(filename);
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
 * Files that do not exist are left in: the caller skips them.
 */
export function symbolSources(filename: string, bid: string | undefined, cacheDir: string): SymbolSource[] {
  const out: SymbolSource[] = [];
  const add = (path: string, debug: boolean): void => {
    out.push({ path, debug });
  };
  const abs = filename.startsWith('/');
  const link = abs ? debuglinkCandidate(filename) : undefined;
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
