/**
 * One `perfpoke record` run: open the events on every online CPU, write the
 * synthesized kernel maps, stream the rings into the output while the
 * workload runs (or until stopped), then finish the file (features, header,
 * rename). Mirrors the life cycle of perf's __cmd_record.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { recordTypeName } from '../abi/record-type.js';
import { onlineCpus } from './cpus.js';
import { RECORD_ATTR_SIZE, samplingEvent, trackingEvent, type RecordEvent } from './events.js';
import { attrFlag, withAttrFlag } from '../abi/event-attr.js';
import { encodeEventAttr } from '../perfdata/event-attr-codec.js';
import { ByteWriter } from '../io/byte-writer.js';
import { recordFeatures } from './features.js';
import { createRecordOutput, HOST_LE } from './file-output.js';
import type { PerfDataWriter } from '../perfdata/writer.js';
import { copyKcoreDir, KCORE_PATH, KcoreUnavailableError } from './kcore-dir.js';
import { loadRecorderAddon, type NativeRecorder, type NativeStats } from './native.js';
import { synthesizeKernelMmaps } from './synthesize.js';
import { synthesizeTasks } from './synthesize-tasks.js';

export interface RecordOptions {
  /** Output file, or with `kcore` the output directory (perf's `-o`). */
  output: string;
  /** Workload to run; recording lasts for its life. Without it, until `signal` aborts. */
  command?: string[];
  /** Extra `-e` events (sampling); `dummy` is always there as the tracking event. */
  events?: string[];
  /** Sampling frequency for `events` (perf's -F; default 4000). */
  freq?: number;
  /** SWITCH_CPU_WIDE records (default on; perf's --switch-events). */
  switchEvents?: boolean;
  /** Ring data pages per CPU (power of two; default 128 = 512 KiB with 4 KiB pages, like perf). */
  pages?: number;
  /** `perf record --kcore`: output is a directory with data + kcore_dir/. */
  kcore?: boolean;
  /** Stop recording (SIGINT/SIGTERM in the CLI). */
  signal?: AbortSignal;
  /** Written to the CMDLINE feature. */
  cmdline?: string[];
  /** Longest time a record waits in a ring before being written (ms). */
  pollMs?: number;
  /** Called once the events are enabled (before the workload starts). */
  onStarted?: () => void;
  /** FORK/COMM/MMAP2 records for processes already running (default true, like perf). */
  synthesizeTasks?: boolean;
  /** Where /proc files are read from (tests). */
  procRoot?: string;
}

export interface RecordResult {
  /** What `-o` named: the file, or the directory with --kcore. */
  output: string;
  /** The perf.data file itself. */
  dataPath: string;
  /** Size of the finished perf.data file. */
  fileBytes: number;
  /** Kernel records captured (synthesized records not included). */
  records: number;
  /** Records perfpoke wrote itself (kernel/module MMAP, FORK, COMM and MMAP2 of running tasks). */
  synthesized: number;
  synthesizedTypes: Record<string, number>;
  /** Records the kernel dropped (sum over PERF_RECORD_LOST / LOST_SAMPLES). */
  lost: number;
  lostRecords: number;
  wakeups: number;
  /** FINISHED_ROUND records written. */
  rounds: number;
  /** Kernel records by type name. */
  types: Record<string, number>;
  cpus: number[];
  events: string[];
  /** Workload exit code (or signal name), when there was one. */
  commandExit?: number | string;
  /** Things the user should know (a feature this kernel lacks). */
  warnings: string[];
  seconds: number;
}

/** A failure the user can act on (bad event, permission): the CLI prints it and exits 2. */
export class RecordError extends Error {
  readonly exitCode = 2;
}

function openHint(msg: string): string {
  if (/EACCES|EPERM|errno 1[^0-9]|errno 13/.test(msg) || /Permission denied|Operation not permitted/.test(msg)) {
    let paranoid = '?';
    try {
      paranoid = readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim();
    } catch {
      // leave '?'
    }
    return `${msg}; system-wide recording needs root or CAP_PERFMON (perf_event_paranoid is ${paranoid})`;
  }
  if (/ENOENT|No such file|errno 2[^0-9]|EOPNOTSUPP|errno 95/.test(msg))
    return `${msg}; this kernel or CPU does not support the event`;
  return msg;
}

/**
 * SAMPLE = header (8), IDENTIFIER (8, always first), IP (8), pid/tid (8), TIME:
 * SAMPLING_SAMPLE_TYPE puts TIME here for every -e event.
 */
const SAMPLE_TIME_OFFSET = 32;

function osErrorName(errno: number): string {
  for (const [name, v] of Object.entries(constants.errno)) if (v === errno) return name;
  return 'write error';
}

function attrBytes(ev: RecordEvent): Buffer {
  const w = new ByteWriter(HOST_LE, RECORD_ATTR_SIZE);
  encodeEventAttr(w, ev.attr, ev.attr.size);
  return Buffer.from(w.finish());
}

function typeCounts(s: NativeStats): Record<string, number> {
  const out: Record<string, number> = {};
  s.types.forEach((n, t) => {
    if (n > 0) out[t === 127 ? '≥127' : recordTypeName(t)] = n;
  });
  return out;
}

/** Move an existing output aside like perf (perf.data → perf.data.old). */
function moveAside(path: string): void {
  if (!existsSync(path)) return;
  const old = `${path}.old`;
  rmSync(old, { recursive: true, force: true });
  renameSync(path, old);
}

/**
 * Record system wide. Throws RecordError (bad options, permissions, no
 * /proc/kcore with `kcore`), AddonMissingError (addon not built); never
 * leaves a half-written output behind.
 */
export async function record(o: RecordOptions): Promise<RecordResult> {
  const t0 = process.hrtime.bigint();
  const proc = o.procRoot ?? '/proc';
  if (o.kcore && !existsSync(o.procRoot ? join(proc, 'kcore') : KCORE_PATH)) {
    throw new KcoreUnavailableError(
      `perfpoke record --kcore: ${o.procRoot ? join(proc, 'kcore') : KCORE_PATH} does not exist on this kernel ` +
        '(CONFIG_PROC_KCORE is off); record without --kcore',
    );
  }
  const Recorder = loadRecorderAddon();
  const pages = o.pages ?? 128;
  if (!Number.isInteger(pages) || pages < 1 || (pages & (pages - 1)) !== 0)
    throw new RecordError(`-m ${pages}: the ring size must be a power of two pages`);
  const freq = o.freq ?? 4000;
  const ringBytes = pages * 4096;
  const events: RecordEvent[] = [trackingEvent({ switchEvents: o.switchEvents ?? true, ringBytes })];
  for (const spec of o.events ?? []) {
    if (spec === 'dummy') continue;
    try {
      events.push(samplingEvent(spec, freq, ringBytes));
    } catch (e) {
      throw new RecordError((e as Error).message);
    }
  }
  const cpus = onlineCpus();

  let rec: NativeRecorder;
  const warnings: string[] = [];
  let output: PerfDataWriter | undefined;
  let failure: unknown;
  let finalSeen!: () => void;
  const final = new Promise<void>((res) => (finalSeen = res));
  try {
    const onChunk = (chunk: Buffer | null, isFinal: boolean): void => {
      try {
        if (chunk && output && failure === undefined) output.writeRecordsSync(chunk);
      } catch (e) {
        failure ??= e;
      }
      if (isFinal) finalSeen();
    };
    const open = (): NativeRecorder =>
      new Recorder(
        { cpus, attrs: events.map(attrBytes), pages, pollMs: o.pollMs ?? 100, sampleTimeOffset: SAMPLE_TIME_OFFSET },
        onChunk,
      );
    try {
      rec = open();
    } catch (e) {
      // Kernels before 5.9 reject text_poke (EINVAL on the tracking event):
      // record without it, as perf falls back on missing features, and say so.
      const tracking = events[0]!.attr;
      if (!/event 0\): .*errno 22/.test((e as Error).message) || !attrFlag(tracking, 'text_poke')) throw e;
      tracking.flags = withAttrFlag(tracking.flags, 'text_poke', false);
      rec = open();
      warnings.push('this kernel does not know attr.text_poke (Linux < 5.9): recording without TEXT_POKE records');
    }
  } catch (e) {
    throw new RecordError(openHint((e as Error).message));
  }
  const ids = rec.ids();
  const outEvents = events.map((event, k) => ({ event, ids: ids[k] ?? [] }));

  // --kcore: build everything in a hidden sibling folder, rename at the end.
  const stage = o.kcore ? join(dirname(o.output), `.${basename(o.output)}.${process.pid}.dir`) : undefined;
  const dataPath = stage ? join(stage, 'data') : o.output;
  let child: ChildProcess | undefined;
  let commandExit: number | string | undefined;
  try {
    if (stage) {
      rmSync(stage, { recursive: true, force: true });
      mkdirSync(stage, { recursive: true });
      copyKcoreDir(join(stage, 'kcore_dir'), proc);
    }
    output = createRecordOutput(
      dataPath,
      outEvents,
      recordFeatures({
        cmdline: o.cmdline ?? ['perfpoke', 'record'],
        nrCpusOnline: cpus.length,
        nrCpusAvail: Math.max(cpus.length, (cpus.at(-1) ?? 0) + 1),
      }),
    );
    const synth = synthesizeKernelMmaps(
      HOST_LE,
      { id: outEvents[0]!.ids[0] ?? 0n },
      { kallsyms: join(proc, 'kallsyms'), modules: join(proc, 'modules') },
    );
    output.writeRecordsSync(synth.bytes);
    const tasks =
      o.synthesizeTasks === false
        ? { bytes: new Uint8Array(0), records: 0, fork: 0, comm: 0, mmap2: 0 }
        : synthesizeTasks(HOST_LE, outEvents[0]!.ids[0] ?? 0n, proc);
    output.writeRecordsSync(tasks.bytes);

    // The reader thread appends to the file itself (no JavaScript on the hot path).
    const target = output.appendTarget();
    rec.start(target.fd, target.offset);
    o.onStarted?.();
    const stopped = new Promise<void>((res) => {
      if (o.signal?.aborted) res();
      o.signal?.addEventListener('abort', () => res(), { once: true });
    });
    if (o.command && o.command.length > 0) {
      const [cmd, ...args] = o.command;
      const c = spawn(cmd!, args, { stdio: 'inherit' });
      child = c;
      const exited = new Promise<void>((res, rej) => {
        c.once('error', (e) =>
          rej(new RecordError(`cannot run ${cmd}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
        );
        c.once('exit', (code, sig) => {
          commandExit = code ?? sig ?? undefined;
          res();
        });
      });
      await Promise.race([exited, stopped]);
      if (commandExit === undefined) {
        // interrupted: end the workload as perf does (SIGTERM), then wait for it
        c.kill('SIGTERM');
        await exited.catch(() => undefined);
      }
    } else {
      await stopped;
    }
    rec.stop();
    await final;
    const s = rec.stats();
    rec.close();
    if (failure !== undefined) throw failure;
    if (s.writeErrno !== 0)
      throw new RecordError(`writing ${dataPath}: ${osErrorName(s.writeErrno)} (errno ${s.writeErrno})`);
    output.appendedUpTo(s.fileEnd);
    if (!stage) moveAside(o.output); // perf keeps the previous perf.data as perf.data.old
    if (s.firstSample !== undefined && s.lastSample !== undefined)
      output.setFeature({ kind: 'sample_time', first: s.firstSample, last: s.lastSample });
    const fileBytes = output.finishSync();
    let finalOut = o.output;
    if (stage) {
      moveAside(o.output);
      renameSync(stage, o.output);
      finalOut = o.output;
    }
    return {
      output: finalOut,
      dataPath: stage ? join(o.output, 'data') : o.output,
      fileBytes,
      records: s.records,
      synthesized: synth.records + tasks.records,
      synthesizedTypes: { MMAP: synth.records, FORK: tasks.fork, COMM: tasks.comm, MMAP2: tasks.mmap2 },
      lost: s.lost,
      lostRecords: s.lostRecords,
      wakeups: s.wakeups,
      rounds: s.passes,
      types: typeCounts(s),
      cpus,
      events: events.map((e) => e.name),
      commandExit,
      warnings,
      seconds: Number(process.hrtime.bigint() - t0) / 1e9,
    };
  } catch (e) {
    try {
      rec.stop();
      rec.close();
    } catch {
      // already stopped
    }
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    output?.abortSync();
    if (stage) rmSync(stage, { recursive: true, force: true });
    throw e;
  }
}

/** Size of an output (file, or directory with --kcore), for the summary line. */
export function outputSize(path: string): number {
  const st = statSync(path);
  return st.isDirectory() ? statSync(join(path, 'data')).size : st.size;
}
