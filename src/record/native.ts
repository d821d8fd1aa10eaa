/**
 * Lazy access to the optional native addon (src/record/native/recorder.cc,
 * built by scripts/build-addon.mjs — the package's `install` script — into
 * build/Release/perfpoke_record.node when a C++ toolchain is there).
 * Only `perfpoke record` loads it, so every other command works on machines
 * where it did not build.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Counters kept by the native reader thread. */
export interface NativeStats {
  /** Bytes handed to JavaScript, FINISHED_ROUND records included. */
  bytes: number;
  /** Kernel records copied out of the rings. */
  records: number;
  /** Sum of `lost` over PERF_RECORD_LOST and LOST_SAMPLES records. */
  lost: number;
  lostRecords: number;
  /** Passes that found data (= FINISHED_ROUND records written). */
  passes: number;
  /** epoll wake-ups with a ready ring. */
  wakeups: number;
  /** Records per type id (index 127 collects ids ≥ 127). */
  types: number[];
  /** Direct mode: the file offset after the last byte written. */
  fileEnd: number;
  /** Direct mode: errno of the first failed write (0 = none); later passes were dropped. */
  writeErrno: number;
  /** Direct mode with sampleTimeOffset: the first and last SAMPLE time seen. */
  firstSample?: bigint;
  lastSample?: bigint;
  /** Following tasks: every one exited (all fds hung up) and the thread ended by itself. */
  ended?: boolean;
}

export interface NativeRecorder {
  ids(): bigint[][];
  /**
   * With `fd`, the native thread appends to it from `offset` (see stats().fileEnd), or with offset -1
   * streams to it (a pipe); else chunks go to onChunk.
   */
  start(fd?: number, offset?: number): void;
  stop(): void;
  close(): void;
  stats(): NativeStats;
}

export interface NativeRecorderOptions {
  cpus: number[];
  /** perf_event_attr bytes in host order, one per event; the first owns the ring. */
  attrs: Buffer[];
  /** Data pages per CPU ring (power of two). */
  pages: number;
  /** epoll timeout: the longest a record waits in a ring before a pass. */
  pollMs?: number;
  /** Byte offset of TIME in SAMPLE records (the same for every sampling event), for HEADER_SAMPLE_TIME. */
  sampleTimeOffset?: number;
  /** Tasks to follow, one event per CPU and task (default [-1]: all tasks, CPU wide). */
  pids?: number[];
  /** false: start() does not enable the events (attr.enable_on_exec does, perf's workload mode). */
  enable?: boolean;
}

/** Recorder.bpfPrograms(): the loaded BPF programs (src/record/synthesize-bpf.ts BpfProgInfo). */
export interface NativeBpfPrograms {
  progs: import('./synthesize-bpf.js').BpfProgInfo[];
  /** errno of the bpf(2) call that ended the walk early (EPERM without CAP_BPF); 0 when complete. */
  errno: number;
}

export type NativeRecorderCtor = (new (
  options: NativeRecorderOptions,
  onChunk: (chunk: Buffer | null, final: boolean) => void,
) => NativeRecorder) & { bpfPrograms?: () => NativeBpfPrograms };

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Where node-gyp puts the addon (same relative place from src/ and dist/).
 * PERFPOKE_RECORD_ADDON overrides it (tests use it to play "not built").
 */
export const ADDON_PATH =
  process.env.PERFPOKE_RECORD_ADDON || join(repoRoot, 'build', 'Release', 'perfpoke_record.node');

/** Thrown when the addon is not built; the CLI prints it and exits 2. */
export class AddonMissingError extends Error {
  readonly exitCode = 2;
}

let cached: NativeRecorderCtor | undefined;

/** The build tools node-gyp needs that are not on PATH now (what to install before rebuilding). */
function missingTools(): string[] {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const has = (name: string): boolean =>
    dirs.some((d) => {
      try {
        return statSync(join(d, name)).isFile();
      } catch {
        return false;
      }
    });
  const out: string[] = [];
  if (!has('g++') && !has('c++')) out.push('g++');
  if (!has('make')) out.push('make');
  if (!has('python3') && !has('python')) out.push('python3');
  return out;
}

/** Load the addon on first use. Throws AddonMissingError saying what to do. */
export function loadRecorderAddon(): NativeRecorderCtor {
  if (cached) return cached;
  const rel = relative(process.cwd(), ADDON_PATH);
  const shown = rel.startsWith('..') ? ADDON_PATH : rel;
  if (!existsSync(ADDON_PATH)) {
    const missing = missingTools();
    const tools = missing.length ? `install ${missing.join(', ')} (missing from PATH)` : 'with g++, make and python3';
    throw new AddonMissingError(
      `record needs the native addon ${shown}, which is not built: ${tools}, then run \`npm rebuild perfpoke\`` +
        ' (in a clone: `node scripts/build-addon.mjs`)',
    );
  }
  try {
    const mod = createRequire(import.meta.url)(ADDON_PATH) as { Recorder: NativeRecorderCtor };
    cached = mod.Recorder;
    return cached;
  } catch (e) {
    const first = (e as Error).message.split('\n')[0];
    throw new AddonMissingError(
      `record: the native addon ${shown} does not load (${first}); rebuild it with \`npm rebuild perfpoke\``,
    );
  }
}
