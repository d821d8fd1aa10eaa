/**
 * Synthetic perf.data files built with our own record encoders (through the
 * writer), one record of every kind perf 6.1 can print, so `perf script -D`
 * can check our decoding and dump text for kinds this machine's kernel never
 * emits (TEXT_POKE above all), in both byte orders.
 */
import { PerfDataWriter } from '../src/perfdata/writer.js';
import type { PerfRecord } from '../src/perfdata/records/index.js';
import {
  emptyAttr,
  withAttrFlag,
  PerfType,
  PERF_COUNT_SW_CPU_CLOCK,
  PERF_COUNT_SW_DUMMY,
  type EventAttr,
} from '../src/abi/event-attr.js';
import { SampleType, ReadFormat, PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER } from '../src/abi/sample-format.js';
import {
  RecordType,
  PERF_RECORD_MISC_KERNEL,
  PERF_RECORD_MISC_USER,
  PERF_RECORD_MISC_COMM_EXEC,
  PERF_RECORD_MISC_SWITCH_OUT,
  PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
  PERF_RECORD_MISC_MMAP_BUILD_ID,
  PERF_RECORD_KSYMBOL_TYPE_OOL,
  PERF_RECORD_KSYMBOL_TYPE_BPF,
  PERF_BPF_EVENT_PROG_LOAD,
} from '../src/abi/record-type.js';
import type { SampleId } from '../src/perfdata/sample-id.js';

const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });
const bytes = (...b: number[]) => new Uint8Array(b);

/** The tracking attr: software dummy with sample_id_all, text_poke, ksymbol, context_switch… */
export function trackingAttr(): EventAttr {
  const a = emptyAttr();
  a.type = PerfType.SOFTWARE;
  a.config = BigInt(PERF_COUNT_SW_DUMMY);
  a.samplePeriod = 1n;
  a.sampleType =
    SampleType.IP |
    SampleType.TID |
    SampleType.TIME |
    SampleType.ID |
    SampleType.CPU |
    SampleType.PERIOD |
    SampleType.IDENTIFIER;
  a.readFormat = ReadFormat.ID;
  let f = 0n;
  for (const n of [
    'sample_id_all',
    'mmap',
    'comm',
    'task',
    'mmap2',
    'comm_exec',
    'context_switch',
    'ksymbol',
    'bpf_event',
    'text_poke',
    'exclude_guest',
  ] as const)
    f = withAttrFlag(f, n);
  a.flags = f;
  return a;
}

/** A sampling attr with every sample_type bit perf 6.1 prints without symbols (no AUX). */
export function fullSampleAttr(): EventAttr {
  const a = emptyAttr();
  a.type = PerfType.SOFTWARE;
  a.config = BigInt(PERF_COUNT_SW_CPU_CLOCK);
  a.samplePeriod = 100000n;
  a.sampleType =
    SampleType.IDENTIFIER |
    SampleType.IP |
    SampleType.TID |
    SampleType.TIME |
    SampleType.ADDR |
    SampleType.ID |
    SampleType.STREAM_ID |
    SampleType.CPU |
    SampleType.PERIOD |
    SampleType.READ |
    SampleType.CALLCHAIN |
    SampleType.RAW |
    SampleType.REGS_USER |
    SampleType.STACK_USER |
    SampleType.WEIGHT |
    SampleType.DATA_SRC |
    SampleType.TRANSACTION |
    SampleType.REGS_INTR |
    SampleType.PHYS_ADDR |
    SampleType.CGROUP |
    SampleType.DATA_PAGE_SIZE |
    SampleType.CODE_PAGE_SIZE;
  a.readFormat =
    ReadFormat.TOTAL_TIME_ENABLED | ReadFormat.TOTAL_TIME_RUNNING | ReadFormat.ID | ReadFormat.GROUP | ReadFormat.LOST;
  a.sampleRegsUser = 0xff0fffn; // AX..R15 without DS/ES/FS/GS
  a.sampleRegsIntr = 0x1ffn;
  a.sampleStackUser = 64;
  a.flags = withAttrFlag(withAttrFlag(0n, 'sample_id_all'), 'exclude_guest');
  return a;
}

const ID_TRACK = 101n;
const ID_SAMPLE = 202n;

function sid(time: bigint, id = ID_TRACK, cpu = 1): SampleId {
  return { pid: 42, tid: 43, time, id, cpu, cpuRes: 0, identifier: id };
}

/** One record of every kernel kind that perf script -D prints, all on the tracking attr. */
export function kernelRecords(): PerfRecord[] {
  let t = 1_000_000n;
  const s = () => {
    t += 1000n;
    return sid(t);
  };
  return [
    // a user-space map only: a kernel map would make perf symbolize pokes with this host's kallsyms
    {
      kind: 'mmap',
      ...head(RecordType.MMAP, PERF_RECORD_MISC_USER),
      pid: 42,
      tid: 43,
      addr: 0x500000n,
      len: 0x1000n,
      pgoff: 0n,
      filename: '/tmp/poke.map',
      sampleId: s(),
    },
    {
      kind: 'comm',
      ...head(RecordType.COMM, PERF_RECORD_MISC_COMM_EXEC),
      pid: 42,
      tid: 43,
      comm: 'poker',
      sampleId: s(),
    },
    { kind: 'fork', ...head(RecordType.FORK), pid: 44, ppid: 42, tid: 44, ptid: 43, time: t, sampleId: s() },
    {
      kind: 'mmap2',
      ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER),
      pid: 42,
      tid: 43,
      addr: 0x400000n,
      len: 0x2000n,
      pgoff: 0x1000n,
      maj: 0xfe,
      min: 1,
      ino: 1234n,
      inoGeneration: 7n,
      prot: 5,
      flags: 2,
      filename: '/usr/bin/poker',
      sampleId: s(),
    },
    {
      kind: 'mmap2',
      ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID),
      pid: 42,
      tid: 43,
      addr: 0x7f0000000000n,
      len: 0x3000n,
      pgoff: 0n,
      buildId: bytes(0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16),
      prot: 7,
      flags: 1,
      filename: '/lib/libpoke.so',
      sampleId: s(),
    },
    { kind: 'lost', ...head(RecordType.LOST), id: ID_TRACK, lost: 17n, sampleId: s() },
    { kind: 'lost_samples', ...head(RecordType.LOST_SAMPLES), lost: 5n, sampleId: s() },
    { kind: 'aux', ...head(RecordType.AUX), auxOffset: 0x1000n, auxSize: 0x200n, flags: 3n, sampleId: s() },
    { kind: 'itrace_start', ...head(RecordType.ITRACE_START), pid: 42, tid: 43, sampleId: s() },
    { kind: 'switch', ...head(RecordType.SWITCH, PERF_RECORD_MISC_SWITCH_OUT), sampleId: s() },
    { kind: 'switch', ...head(RecordType.SWITCH), sampleId: s() },
    {
      kind: 'switch_cpu_wide',
      ...head(RecordType.SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT),
      nextPrevPid: 7,
      nextPrevTid: 8,
      sampleId: s(),
    },
    {
      kind: 'namespaces',
      ...head(RecordType.NAMESPACES),
      pid: 42,
      tid: 43,
      links: Array.from({ length: 7 }, (_, i) => ({ dev: BigInt(4 + i), ino: BigInt(0xf0000000 + i) })),
      sampleId: s(),
    },
    {
      kind: 'ksymbol',
      ...head(RecordType.KSYMBOL, PERF_RECORD_MISC_KERNEL),
      addr: 0xffffffffc0001000n,
      len: 0x80,
      ksymType: PERF_RECORD_KSYMBOL_TYPE_BPF,
      flags: 0,
      name: 'bpf_prog_6deef7357e7b4530_poke',
      sampleId: s(),
    },
    {
      kind: 'bpf_event',
      ...head(RecordType.BPF_EVENT, PERF_RECORD_MISC_KERNEL),
      bpfType: PERF_BPF_EVENT_PROG_LOAD,
      flags: 0,
      id: 99,
      tag: bytes(0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30),
      sampleId: s(),
    },
    {
      kind: 'ksymbol',
      ...head(RecordType.KSYMBOL, PERF_RECORD_MISC_KERNEL),
      addr: 0xffffffffc0002000n,
      len: 0x100,
      ksymType: PERF_RECORD_KSYMBOL_TYPE_OOL,
      flags: 0,
      name: 'ftrace_trampoline',
      sampleId: s(),
    },
    { kind: 'cgroup', ...head(RecordType.CGROUP), id: 0x1234n, path: '/system.slice/poke.service', sampleId: s() },
    // a jump label flip: 5-byte nop → jmp
    {
      kind: 'text_poke',
      ...head(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL),
      addr: 0xffffffff81234560n,
      oldLen: 5,
      newLen: 5,
      oldBytes: bytes(0x0f, 0x1f, 0x44, 0, 0),
      newBytes: bytes(0xe9, 0x10, 0x20, 0, 0),
      sampleId: s(),
    },
    // a new trampoline (old_len 0) and its removal (new_len 0)
    {
      kind: 'text_poke',
      ...head(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL),
      addr: 0xffffffffc0002000n,
      oldLen: 0,
      newLen: 11,
      oldBytes: bytes(),
      newBytes: bytes(0x55, 0x48, 0x89, 0xe5, 0xe8, 1, 2, 3, 4, 0x5d, 0xc3),
      sampleId: s(),
    },
    {
      kind: 'text_poke',
      ...head(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL),
      addr: 0xffffffffc0002000n,
      oldLen: 3,
      newLen: 0,
      oldBytes: bytes(0x55, 0x48, 0x89),
      newBytes: bytes(),
      sampleId: s(),
    },
    { kind: 'aux_output_hw_id', ...head(RecordType.AUX_OUTPUT_HW_ID), hwId: 0x5n, sampleId: s() },
    { kind: 'throttle', ...head(RecordType.THROTTLE), time: t, id: ID_TRACK, streamId: ID_TRACK, sampleId: s() },
    { kind: 'unthrottle', ...head(RecordType.UNTHROTTLE), time: t, id: ID_TRACK, streamId: ID_TRACK, sampleId: s() },
    { kind: 'exit', ...head(RecordType.EXIT), pid: 44, ppid: 42, tid: 44, ptid: 43, time: t, sampleId: s() },
  ];
}

/** Samples on the full attr: callchain, raw, regs, stack, read group… */
export function fullSamples(): PerfRecord[] {
  const stack = new Uint8Array(64).map((_, i) => i);
  const out: PerfRecord[] = [];
  for (let k = 0; k < 3; k++) {
    out.push({
      kind: 'sample',
      ...head(RecordType.SAMPLE, k === 1 ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL),
      identifier: ID_SAMPLE,
      ip: 0xffffffff81000100n + BigInt(k),
      pid: 42,
      tid: 43,
      time: 2_000_000n + BigInt(k) * 10n,
      addr: 0x7ffd0000n,
      id: ID_SAMPLE,
      streamId: ID_SAMPLE,
      cpu: 1,
      cpuRes: 0,
      period: 100000n,
      read: {
        group: true,
        timeEnabled: 1000n,
        timeRunning: 900n,
        values: [
          { value: 55n, id: ID_SAMPLE, lost: 0n },
          { value: 66n, id: 303n, lost: 2n },
        ],
      },
      callchain: [
        PERF_CONTEXT_KERNEL,
        0xffffffff81000100n,
        0xffffffff81000200n,
        PERF_CONTEXT_USER,
        0x401000n + BigInt(k),
      ],
      raw: bytes(1, 2, 3, 4),
      regsUser: { abi: 2n, regs: Array.from({ length: 20 }, (_, i) => BigInt(i * 0x1111)) },
      stackUser: { data: stack, dynSize: BigInt(32 + k) },
      weight: 77n,
      dataSrc: 0x68100142n,
      transaction: 0x3n,
      regsIntr:
        k === 2
          ? { abi: 0n, regs: [] }
          : { abi: 2n, regs: Array.from({ length: 9 }, (_, i) => BigInt(0xffff0000 + i)) },
      physAddr: 0x12345000n,
      cgroup: 0x1234n,
      dataPageSize: 4096n,
      codePageSize: 2n * 1024n * 1024n,
    });
  }
  return out;
}

/** User records perf prints in -D without needing more context. */
export function userRecords(): PerfRecord[] {
  return [
    {
      kind: 'id_index',
      ...head(RecordType.ID_INDEX),
      entries: [
        { id: ID_TRACK, idx: 0n, cpu: BigInt.asUintN(64, -1n), tid: 42n },
        { id: ID_SAMPLE, idx: 1n, cpu: 1n, tid: BigInt.asUintN(64, -1n) },
      ],
    },
    {
      kind: 'thread_map',
      ...head(RecordType.THREAD_MAP),
      entries: [
        { pid: 42n, comm: 'poker' },
        { pid: 43n, comm: '' },
      ],
    },
    { kind: 'cpu_map', ...head(RecordType.CPU_MAP), data: { type: 0, cpus: [0, 1, 2, 5] } },
    { kind: 'cpu_map', ...head(RecordType.CPU_MAP), data: { type: 1, longSize: 8, mask: [0b1011n], cpus: [0, 1, 3] } },
    {
      kind: 'event_update',
      ...head(RecordType.EVENT_UPDATE),
      updateType: 0n,
      id: ID_SAMPLE,
      unit: 'msec',
      dataSize: 8,
    },
    {
      kind: 'event_update',
      ...head(RecordType.EVENT_UPDATE),
      updateType: 1n,
      id: ID_SAMPLE,
      scale: 0.000001,
      dataSize: 8,
    },
    {
      kind: 'event_update',
      ...head(RecordType.EVENT_UPDATE),
      updateType: 2n,
      id: ID_SAMPLE,
      name: 'cpu-clock',
      dataSize: 16,
    },
    { kind: 'finished_init', ...head(RecordType.FINISHED_INIT) },
  ];
}

export interface SynthOptions {
  bigEndian?: boolean;
  padRecords?: number;
  /** Leave out the kinds perf 6.1 cannot byte-swap (KSYMBOL, BPF_EVENT: no perf_event__swap_ops entry). */
  perfSwappable?: boolean;
}

/** Write the synthetic file: tracking attr + full-sample attr, kernel records, samples, a round marker. */
export async function writeSynthetic(path: string, opts: SynthOptions = {}): Promise<PerfRecord[]> {
  const w = await PerfDataWriter.create(
    path,
    [
      { attr: trackingAttr(), ids: [ID_TRACK], name: 'dummy:u' },
      { attr: fullSampleAttr(), ids: [ID_SAMPLE, 303n], name: 'cpu-clock' },
    ],
    { bigEndian: opts.bigEndian, padRecords: opts.padRecords },
  );
  let kernel = kernelRecords();
  if (opts.perfSwappable) kernel = kernel.filter((r) => r.kind !== 'ksymbol' && r.kind !== 'bpf_event');
  const all: PerfRecord[] = [
    ...userRecords(),
    ...kernel,
    ...fullSamples(),
    { kind: 'finished_round', ...head(RecordType.FINISHED_ROUND) },
  ];
  try {
    for (const r of all) await w.write(r, r.kind === 'sample' ? 1 : 0);
    await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
  return all;
}
