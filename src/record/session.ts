/**
 * One `perfpoke record` run: open the events on every online CPU (system
 * wide, or for the followed tasks on each CPU), write the synthesized kernel
 * maps, tasks and BPF programs, stream the rings into the output while the
 * workload runs (or until stopped, or until the followed tasks exit), then
 * finish the file (features, header, rename). Mirrors perf's __cmd_record.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { recordTypeName } from '../abi/record-type.js';
import { onlineCpus } from './cpus.js';
import { forTasks, RECORD_ATTR_SIZE, samplingEvent, trackingEvent, type RecordEvent } from './events.js';
import { attrFlag, withAttrFlag } from '../abi/event-attr.js';
import { encodeEventAttr } from '../perfdata/event-attr-codec.js';
import { ByteWriter } from '../io/byte-writer.js';
import { recordFeatures } from './features.js';
import { createRecordOutput, createRecordPipe, HOST_LE } from './file-output.js';
import type { PerfDataWriter } from '../perfdata/writer.js';
import { copyKcoreDir, KCORE_PATH, KcoreUnavailableError } from './kcore-dir.js';
import { loadRecorderAddon, type NativeRecorder, type NativeStats } from './native.js';
import { synthesizeKernelMmaps } from './synthesize.js';
import { synthesizeTasks, type TaskSelection } from './synthesize-tasks.js';
import { synthesizeBpfPrograms } from './synthesize-bpf.js';
import { resolveThreads, spawnCorked, TargetError, type CorkedWorkload } from './target.js';

export interface RecordOptions {
  /** Output file, or with `kcore` the output directory (perf's `-o`); `-` = pipe mode on stdout. */
  output: string;
  /**
   * Workload to run; recording lasts for its life. Without it, until `signal` aborts (or, with
   * `pids`/`tids`, until those tasks have exited). Without `systemWide`, `pids` and `tids`,
   * only the workload and its children are recorded (perf record -- CMD).
   */
  command?: string[];
  /** perf's -a. Default: true when there is no command, no `pids` and no `tids`. */
  systemWide?: boolean;
  /** perf's -p: follow these processes (all their threads, and the children they fork). */
  pids?: number[];
  /** perf's -t: follow these threads. */
  tids?: number[];
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
  /** Records perfpoke wrote itself (kernel/module MMAP; FORK, COMM, MMAP2 of tasks; KSYMBOL, BPF_EVENT). */
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
  /** What was followed: every task (`system`), existing tasks, or the workload. */
  target: 'system' | 'tasks' | 'workload';
  /** Threads the events were opened for (empty when system wide). */
  threads: number[];
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

function openHint(msg: string, systemWide: boolean): string {
  if (/EACCES|EPERM|errno 1[^0-9]|errno 13/.test(msg) || /Permission denied|Operation not permitted/.test(msg)) {
    let paranoid = '?';
    try {
      paranoid = readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim();
    } catch {
      // leave '?'
    }
    const what = systemWide
      ? 'system-wide recording needs root or CAP_PERFMON'
      : 'recording tasks needs perf_event_paranoid ≤ 2 (≤ 1 for kernel samples), and -p/-t of others ptrace rights';
    return `${msg}; ${what} (perf_event_paranoid is ${paranoid})`;
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
 * Open, falling back as perf's evsel__fallback does: kernels before 5.9
 * reject text_poke (EINVAL on the tracking event): record without it. With
 * perf_event_paranoid 2 an unprivileged user may only watch their own tasks
 * in user space (EACCES): count user space only (`:u`). Each fallback is said.
 */
function openWithFallbacks(
  open: () => NativeRecorder,
  events: RecordEvent[],
  perTask: boolean,
  warnings: string[],
): NativeRecorder {
  for (;;) {
    try {
      return open();
    } catch (e) {
      const msg = (e as Error).message;
      const tracking = events[0]!.attr;
      if (/event 0\): .*errno 22/.test(msg) && attrFlag(tracking, 'text_poke')) {
        tracking.flags = withAttrFlag(tracking.flags, 'text_poke', false);
        warnings.push('this kernel does not know attr.text_poke (Linux < 5.9): recording without TEXT_POKE records');
        continue;
      }
      if (perTask && /errno 13\)/.test(msg) && events.some((ev) => !attrFlag(ev.attr, 'exclude_kernel'))) {
        for (const ev of events) {
          ev.attr.flags = withAttrFlag(withAttrFlag(ev.attr.flags, 'exclude_kernel'), 'exclude_hv');
          if (ev.name !== 'dummy' && !ev.name.includes(':')) ev.name = `${ev.name}:u`;
        }
        warnings.push('perf_event_paranoid forbids kernel profiling here: recording user space only (:u), as perf');
        continue;
      }
      throw e;
    }
  }
}

/** Split a block of whole records (none with a payload) into the pipe writer, in order. */
async function writeRecordsPipe(out: PerfDataWriter, block: Uint8Array): Promise<void> {
  const dv = new DataView(block.buffer, block.byteOffset, block.byteLength);
  for (let at = 0; at + 8 <= block.length; ) {
    const size = dv.getUint16(at + 6, HOST_LE);
    if (size < 8) throw new Error(`record: bad synthesized record size ${size} at ${at}`);
    await out.writeBytes(block.subarray(at, at + size));
    at += size;
  }
}

interface Target {
  kind: RecordResult['target'];
  /** perf_event_open pids: [-1] system wide, else one per thread. */
  pids: number[];
  /** What to synthesize for the tasks (undefined: every process). */
  tasks?: TaskSelection;
  workload?: CorkedWorkload;
}

/** perf's target rules: -a wins; -p/-t attach; else the command is followed from its exec. */
function chooseTarget(o: RecordOptions, proc: string): Target {
  const hasTasks = (o.pids?.length ?? 0) > 0 || (o.tids?.length ?? 0) > 0;
  const systemWide = o.systemWide ?? (!hasTasks && !(o.command && o.command.length > 0));
  if (systemWide) return { kind: 'system', pids: [-1] };
  if (hasTasks) {
    const threads = resolveThreads(o.pids, o.tids, proc);
    return { kind: 'tasks', pids: [...threads.values()].flat(), tasks: { threads } };
  }
  if (!o.command || o.command.length === 0)
    throw new RecordError('record: nothing to record (no -a, -p, -t or command)');
  const workload = spawnCorked(o.command, o.output === '-');
  return {
    kind: 'workload',
    pids: [workload.pid],
    tasks: { threads: new Map([[workload.pid, [workload.pid]]]), noMaps: true },
    workload,
  };
}

/**
 * Record. Throws RecordError (bad options, permissions, no /proc/kcore with
 * `kcore`), TargetError (no such process, command not found),
 * AddonMissingError (addon not built); never leaves a half-written output behind.
 */
export async function record(o: RecordOptions): Promise<RecordResult> {
  const t0 = process.hrtime.bigint();
  const proc = o.procRoot ?? '/proc';
  const pipe = o.output === '-';
  if (pipe && o.kcore) throw new RecordError('record: --kcore writes a directory; it cannot go to a pipe (-o -)');
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
  const target = chooseTarget(o, proc);
  // perf's rules: -t turns inherit off (cmd_record: no_inherit when a tid is given); a workload enables on exec
  const inherit = (o.tids?.length ?? 0) === 0;
  if (target.kind !== 'system')
    for (const ev of events) forTasks(ev, { inherit, enableOnExec: target.kind === 'workload' });

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
        {
          cpus,
          attrs: events.map(attrBytes),
          pages,
          pollMs: o.pollMs ?? 100,
          sampleTimeOffset: SAMPLE_TIME_OFFSET,
          pids: target.pids,
          enable: target.kind !== 'workload',
        },
        onChunk,
      );
    rec = openWithFallbacks(open, events, target.kind !== 'system', warnings);
  } catch (e) {
    target.workload?.cancel();
    if (/ESRCH|errno 3\)/.test((e as Error).message))
      throw new TargetError(`${(e as Error).message}: the task exited before recording started`);
    throw new RecordError(openHint((e as Error).message, target.kind === 'system'));
  }
  const ids = rec.ids();
  const outEvents = events.map((event, k) => ({ event, ids: ids[k] ?? [] }));

  // --kcore: build everything in a hidden sibling folder, rename at the end.
  const stage = o.kcore ? join(dirname(o.output), `.${basename(o.output)}.${process.pid}.dir`) : undefined;
  const dataPath = stage ? join(stage, 'data') : o.output;
  let child: ChildProcess | undefined = target.workload?.child;
  let commandExit: number | string | undefined;
  try {
    if (stage) {
      rmSync(stage, { recursive: true, force: true });
      mkdirSync(stage, { recursive: true, mode: 0o700 }); // perf's data directory is the user's only
      copyKcoreDir(join(stage, 'kcore_dir'), proc);
    }
    const features = recordFeatures({
      cmdline: o.cmdline ?? ['perfpoke', 'record'],
      nrCpusOnline: cpus.length,
      nrCpusAvail: Math.max(cpus.length, (cpus.at(-1) ?? 0) + 1),
    });
    output = pipe ? await createRecordPipe(outEvents, features) : createRecordOutput(dataPath, outEvents, features);
    const sid = { id: outEvents[0]!.ids[0] ?? 0n };
    const synth = synthesizeKernelMmaps(HOST_LE, sid, {
      kallsyms: join(proc, 'kallsyms'),
      modules: join(proc, 'modules'),
    });
    const tasks =
      o.synthesizeTasks === false
        ? { bytes: new Uint8Array(0), records: 0, fork: 0, comm: 0, mmap2: 0 }
        : synthesizeTasks(HOST_LE, sid.id, proc, target.tasks);
    const listed = Recorder.bpfPrograms?.();
    // perf stays silent on EPERM (no CAP_BPF) and EINVAL (old kernel), and so do we
    if (
      listed &&
      listed.errno !== 0 &&
      listed.errno !== constants.errno.EPERM &&
      listed.errno !== constants.errno.EINVAL
    )
      warnings.push(`cannot list the loaded BPF programs (${osErrorName(listed.errno)}): their code stays unnamed`);
    const bpf = synthesizeBpfPrograms(HOST_LE, listed?.progs ?? [], sid);
    for (const block of [synth.bytes, tasks.bytes, bpf.bytes]) {
      if (pipe) await writeRecordsPipe(output, block);
      else output.writeRecordsSync(block);
    }

    // The reader thread appends to the file (or the pipe) itself: no JavaScript on the hot path.
    let headBytes = 0;
    if (pipe) {
      headBytes = output.offset;
      await output.finish(); // everything before the ring data is on stdout now
      rec.start(1, -1);
    } else {
      const at = output.appendTarget();
      rec.start(at.fd, at.offset);
    }
    o.onStarted?.();
    const stopped = new Promise<void>((res) => {
      if (o.signal?.aborted) res();
      o.signal?.addEventListener('abort', () => res(), { once: true });
    });
    if (o.command && o.command.length > 0) {
      let c: ChildProcess;
      if (target.workload) {
        c = target.workload.child;
        target.workload.go();
      } else {
        const [cmd, ...args] = o.command;
        c = spawn(cmd!, args, { stdio: ['inherit', pipe ? 2 : 'inherit', 'inherit'] });
        child = c;
      }
      const exited = new Promise<void>((res, rej) => {
        c.once('error', (e) =>
          rej(new RecordError(`cannot run ${o.command![0]}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
        );
        if (c.exitCode !== null || c.signalCode !== null) {
          commandExit = c.exitCode ?? c.signalCode ?? undefined;
          return res();
        }
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
    } else if (target.kind === 'tasks') {
      await Promise.race([stopped, final]); // perf -p/-t ends when the tasks are gone
    } else {
      await stopped;
    }
    rec.stop();
    await final;
    const s = rec.stats();
    rec.close();
    if (failure !== undefined) throw failure;
    if (s.writeErrno !== 0)
      throw new RecordError(
        `writing ${pipe ? 'stdout' : dataPath}: ${osErrorName(s.writeErrno)} (errno ${s.writeErrno})`,
      );
    const synthesizedTypes: Record<string, number> = {
      MMAP: synth.records,
      FORK: tasks.fork,
      COMM: tasks.comm,
      MMAP2: tasks.mmap2,
      KSYMBOL: bpf.ksymbol,
      BPF_EVENT: bpf.bpfEvent,
    };
    const common = {
      records: s.records,
      synthesized: synth.records + tasks.records + bpf.ksymbol + bpf.bpfEvent,
      synthesizedTypes,
      lost: s.lost,
      lostRecords: s.lostRecords,
      wakeups: s.wakeups,
      rounds: s.passes,
      types: typeCounts(s),
      cpus,
      target: target.kind,
      threads: target.pids.filter((p) => p !== -1),
      events: events.map((e) => e.name),
      commandExit,
      warnings,
    };
    if (pipe) {
      return {
        output: '-',
        dataPath: '-',
        fileBytes: headBytes + s.fileEnd,
        ...common,
        seconds: Number(process.hrtime.bigint() - t0) / 1e9,
      };
    }
    output.appendedUpTo(s.fileEnd);
    if (!stage) moveAside(o.output); // perf keeps the previous perf.data as perf.data.old
    if (s.firstSample !== undefined && s.lastSample !== undefined)
      output.setFeature({ kind: 'sample_time', first: s.firstSample, last: s.lastSample });
    const fileBytes = output.finishSync();
    if (stage) {
      moveAside(o.output);
      renameSync(stage, o.output);
    }
    return {
      output: o.output,
      dataPath: stage ? join(o.output, 'data') : o.output,
      fileBytes,
      ...common,
      seconds: Number(process.hrtime.bigint() - t0) / 1e9,
    };
  } catch (e) {
    try {
      rec.stop();
      rec.close();
    } catch {
      // already stopped
    }
    target.workload?.cancel();
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
