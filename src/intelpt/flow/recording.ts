/**
 * Read what the flow decoder needs from an intel_pt recording: the AUX data
 * per CPU (AUXTRACE records, concatenated in file order per queue), the
 * intel_pt AUXTRACE_INFO (time conversion, TSC and return-compression bits),
 * and the code image with its pokes (src/machine).
 */
import { PerfFile } from '../../perfdata/perf-file.js';
import { RecordType } from '../../abi/record-type.js';
import { FormatError } from '../../io/errors.js';
import { loadMachine, type Machine } from '../../machine/from-perf-data.js';
import type { PtTimeConv } from './time-conv.js';
import type { FlowPoke } from './decode.js';
import { INTEL_PT_PRIV } from '../auxtrace-info.js';

export interface PtBuffer {
  /** Offset of the AUXTRACE record in the file. */
  fileOffset: number;
  /** Offset of this buffer in the CPU's concatenated trace. */
  start: number;
  size: number;
  auxOffset: bigint;
}

export interface PtRecording {
  machine: Machine;
  cpus: { cpu: number; trace: Uint8Array; buffers: PtBuffer[] }[];
  pokes: FlowPoke[];
  timeConv?: PtTimeConv;
  retCompression: boolean;
  pmuType: number;
}

export async function loadPtRecording(input: string): Promise<PtRecording> {
  const machine = await loadMachine(input);
  const f = await PerfFile.open(machine.dataFile);
  let priv: bigint[] | undefined;
  const chunks = new Map<number, { data: Uint8Array; fileOffset: number; auxOffset: bigint }[]>();
  try {
    for await (const raw of f.records()) {
      if (raw.type === RecordType.AUXTRACE_INFO) {
        const r = raw.decode();
        if (r.kind === 'auxtrace_info' && r.auxType === 1) priv = r.priv;
      } else if (raw.type === RecordType.AUXTRACE) {
        const r = raw.decode();
        if (r.kind !== 'auxtrace' || !raw.auxData) continue;
        const q = r.cpu >= 0 ? r.cpu : r.idx;
        let l = chunks.get(q);
        if (!l) chunks.set(q, (l = []));
        l.push({ data: raw.auxData.slice(), fileOffset: raw.fileOffset, auxOffset: r.offset });
      }
    }
  } finally {
    await f.close();
  }
  if (!priv)
    throw new FormatError({
      kind: 'unsupported',
      offset: 0,
      structure: 'AUXTRACE_INFO',
      file: machine.dataFile,
      expected: 'an intel_pt AUXTRACE_INFO record (type 1)',
      actual: 'none',
    });
  const p = (i: number): bigint => priv![i] ?? 0n;
  const pmuType = Number(p(INTEL_PT_PRIV.PMU_TYPE));
  const ptAttr = f.attrs.find((a) => a.attr.type === pmuType)?.attr;
  const config = ptAttr?.config ?? 0n;
  const tscBit = p(INTEL_PT_PRIV.TSC_BIT);
  // perf's intel_pt_timeless_decoding: TSC bit, cap_user_time_zero, and TIME in every attr's sample_type.
  const timed =
    tscBit !== 0n &&
    p(INTEL_PT_PRIV.CAP_USER_TIME_ZERO) !== 0n &&
    (config & tscBit) !== 0n &&
    f.attrs.every((a) => (a.attr.sampleType & 4n) !== 0n);
  const timeConv: PtTimeConv | undefined = timed
    ? {
        shift: Number(p(INTEL_PT_PRIV.TIME_SHIFT)),
        mult: Number(p(INTEL_PT_PRIV.TIME_MULT)),
        zero: p(INTEL_PT_PRIV.TIME_ZERO),
      }
    : undefined;
  const noret = p(INTEL_PT_PRIV.NORETCOMP_BIT);
  const retCompression = !(noret && config & noret);
  const cpus = [...chunks.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([cpu, l]) => {
      const total = l.reduce((a, c) => a + c.data.length, 0);
      const trace = new Uint8Array(total);
      const buffers: PtBuffer[] = [];
      let pos = 0;
      for (const c of l) {
        trace.set(c.data, pos);
        buffers.push({ fileOffset: c.fileOffset, start: pos, size: c.data.length, auxOffset: c.auxOffset });
        pos += c.data.length;
      }
      return { cpu, trace, buffers };
    });
  const pokes: FlowPoke[] = machine.image.pokes.map((pp) => ({
    time: pp.poke.time,
    addr: pp.poke.addr,
    len: Math.max(pp.poke.oldBytes.length, pp.poke.newBytes.length),
  }));
  return { machine, cpus, pokes, timeConv, retCompression, pmuType };
}
