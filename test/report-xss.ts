/**
 * A recording whose strings are markup (the report test's crafted input),
 * written with the project's own writer: the host name, the command line,
 * the event name, a thread's comm, a mapped file's name and a KSYMBOL (which
 * names a text poke's site) are all `<img src=x onerror=alert(1)>`.
 */
import { emptyAttr, withAttrFlag } from '../src/abi/event-attr.js';
import { PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_USER, RecordType } from '../src/abi/record-type.js';
import { SampleType } from '../src/abi/sample-format.js';
import type { PerfRecord } from '../src/perfdata/index.js';
import { PerfDataWriter } from '../src/perfdata/writer.js';

export const XSS = '<img src=x onerror=alert(1)>';

export async function writeXssRecording(out: string): Promise<void> {
  let flags = withAttrFlag(0n, 'sample_id_all');
  for (const f of ['text_poke', 'ksymbol', 'comm', 'mmap'] as const) flags = withAttrFlag(flags, f);
  const attr = {
    ...emptyAttr(),
    type: 1,
    size: 128,
    config: 0n,
    samplePeriod: 1000n,
    sampleType: SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.CPU | SampleType.PERIOD,
    flags,
  };
  const w = await PerfDataWriter.create(out, [{ attr, ids: [], name: XSS }], {
    features: [
      { kind: 'hostname', value: XSS },
      { kind: 'cmdline', argv: ['perf', 'record', XSS] },
    ],
  });
  const head = (type: number, misc = 0) => ({ type, misc, size: 0, fileOffset: 0 });
  const sid = (time: bigint) => ({ pid: 42, tid: 42, time, cpu: 0 });
  const bpf = 0xffffffffc0001000n;
  const recs = [
    { kind: 'comm', ...head(RecordType.COMM), pid: 42, tid: 42, comm: XSS, sampleId: sid(1_000_000n) },
    {
      kind: 'mmap2',
      ...head(RecordType.MMAP2, PERF_RECORD_MISC_USER),
      pid: 42,
      tid: 42,
      addr: 0x400000n,
      len: 0x1000n,
      pgoff: 0n,
      maj: 0,
      min: 0,
      ino: 1n,
      inoGeneration: 0n,
      prot: 5,
      flags: 2,
      filename: XSS,
      sampleId: sid(1_001_000n),
    },
    {
      kind: 'ksymbol',
      ...head(RecordType.KSYMBOL, PERF_RECORD_MISC_KERNEL),
      addr: bpf,
      len: 0x40,
      ksymType: 1,
      flags: 0,
      name: XSS,
      sampleId: sid(1_002_000n),
    },
    {
      kind: 'text_poke',
      ...head(RecordType.TEXT_POKE, PERF_RECORD_MISC_KERNEL),
      addr: bpf,
      oldLen: 5,
      newLen: 5,
      oldBytes: Uint8Array.of(0x0f, 0x1f, 0x44, 0x00, 0x00),
      newBytes: Uint8Array.of(0xe8, 0x00, 0x00, 0x00, 0x00),
      sampleId: sid(1_003_000n),
    },
    {
      kind: 'sample',
      ...head(RecordType.SAMPLE, PERF_RECORD_MISC_USER),
      ip: 0x400010n,
      pid: 42,
      tid: 42,
      time: 1_004_000n,
      cpu: 0,
      cpuRes: 0,
      period: 1000n,
    },
  ];
  for (const r of recs) await w.write(r as PerfRecord);
  await w.finish();
}
