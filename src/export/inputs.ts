/**
 * What `perfpoke sql -i` accepts: recordings (a perf.data file or a
 * `perf record --kcore` directory) and exports (a folder `perfpoke export`
 * wrote, `<table>/recording=NAME/…`), given as a list, or as glob patterns
 * the shell did not expand (`-i 'runs/*.data'`: Node 20 has no fs.glob).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { recordingName } from './collect.js';
import { TABLE_NAMES } from './schema.js';

/** Bad -i arguments (the CLI reports them as usage errors). */
export class SqlInputError extends Error {}

export type SqlInput = { kind: 'recording'; path: string } | { kind: 'export'; path: string };

const GLOB = /[*?[]/;

function segmentRegex(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const end = seg.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${seg
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Paths matching a pattern whose segments may hold * ? [..] (hidden names only when asked for). */
export function expandGlob(pattern: string): string[] {
  if (!GLOB.test(pattern)) return [pattern];
  const abs = pattern.startsWith('/');
  let found = [abs ? '/' : '.'];
  for (const seg of pattern.split('/').filter((s) => s !== '')) {
    const next: string[] = [];
    for (const dir of found) {
      if (!GLOB.test(seg)) {
        const p = join(dir, seg);
        if (existsSync(p)) next.push(p);
        continue;
      }
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      const re = segmentRegex(seg);
      for (const n of names.sort())
        if (re.test(n) && (seg.startsWith('.') || !n.startsWith('.'))) next.push(join(dir, n));
    }
    found = next;
  }
  return abs ? found : found.map((p) => p.replace(/^\.\//, ''));
}

/** An export folder: it has at least one `<table>/recording=*` partition. */
export function isExportDir(path: string): boolean {
  if (!statSync(path).isDirectory()) return false;
  return TABLE_NAMES.some((t) => {
    try {
      return readdirSync(join(path, t)).some((n) => n.startsWith('recording='));
    } catch {
      return false;
    }
  });
}

/** The recordings an export folder holds (its `recordings/recording=NAME` partitions with a Parquet file). */
export function exportedRecordings(dir: string): string[] {
  const base = join(dir, 'recordings');
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((n) => n.startsWith('recording=') && existsSync(join(base, n, 'part-0.parquet')))
    .map((n) => n.slice('recording='.length));
}

/**
 * Throws the fs error (ENOENT…) for a path that is not there, SqlInputError
 * for a glob matching nothing, an export without Parquet files (a jsonl
 * export) and two inputs that would give the same recording name.
 */
export function resolveSqlInputs(args: string[]): SqlInput[] {
  const out: SqlInput[] = [];
  const seen = new Map<string, string>();
  const claim = (name: string, path: string): void => {
    const other = seen.get(name);
    if (other !== undefined)
      throw new SqlInputError(`-i ${path}: recording '${name}' is also in ${other}: export one of them with --name`);
    seen.set(name, path);
  };
  for (const a of args) {
    if (a === '-') throw new SqlInputError('-i -: sql reads its inputs several times; save the pipe to a file first');
    const paths = expandGlob(a);
    if (paths.length === 0) throw new SqlInputError(`-i ${a}: no file matches`);
    for (const p of paths) {
      if (!isExportDir(p)) {
        claim(recordingName(p), p);
        out.push({ kind: 'recording', path: p });
        continue;
      }
      const names = exportedRecordings(p);
      if (names.length === 0)
        throw new SqlInputError(`-i ${p}: an export folder without Parquet files (sql reads --format parquet exports)`);
      for (const n of names) claim(n, p);
      out.push({ kind: 'export', path: p });
    }
  }
  return out;
}
