import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { SampleType } from '../../abi/sample-format.js';
import type { AttrLayout } from '../layout.js';
import type { DecodeContext, RecordHead } from './common.js';
import { decodeReadFormat, encodeReadFormat, type ReadValues } from './read-format.js';

/**
 * PERF_RECORD_SAMPLE (9). Fields appear in uapi order, each only when its
 * attr.sample_type bit is set (IDENTIFIER first). Optional fields are absent
 * (undefined) when their bit is not set.
 */
export interface SampleRecord extends RecordHead {
  kind: 'sample';
  identifier?: bigint;
  ip?: bigint;
  pid?: number;
  tid?: number;
  time?: bigint;
  addr?: bigint;
  id?: bigint;
  streamId?: bigint;
  cpu?: number;
  cpuRes?: number;
  period?: bigint;
  read?: ReadValues;
  callchain?: bigint[];
  raw?: Uint8Array;
  branchStack?: { hwIdx?: bigint; entries: { from: bigint; to: bigint; flags: bigint }[] };
  regsUser?: { abi: bigint; regs: bigint[] };
  stackUser?: { data: Uint8Array; dynSize?: bigint };
  /** WEIGHT or WEIGHT_STRUCT: the raw u64 (WEIGHT_STRUCT: u32 var1_dw, u16 var2_w, u16 var3_w). */
  weight?: bigint;
  dataSrc?: bigint;
  transaction?: bigint;
  regsIntr?: { abi: bigint; regs: bigint[] };
  physAddr?: bigint;
  cgroup?: bigint;
  dataPageSize?: bigint;
  codePageSize?: bigint;
  aux?: Uint8Array;
}

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

function count(r: ByteReader, what: string, unit: number): number {
  const at = r.pos;
  const n = r.u64n(what);
  if (n * unit > r.remaining) {
    r.pos = at;
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: what,
      actual: n,
      expected: `≤ ${Math.floor(r.remaining / unit)} (what fits in the record)`,
    });
  }
  return n;
}

function regs(r: ByteReader, n: number): { abi: bigint; regs: bigint[] } {
  const abi = r.u64();
  const out: bigint[] = [];
  if (abi !== 0n) for (let i = 0; i < n; i++) out.push(r.u64());
  return { abi, regs: out };
}

/** Throws FormatError when a count or size field runs past the record. */
export function decodeSample(r: ByteReader, h: RecordHead, ctx: DecodeContext): SampleRecord {
  const s: SampleRecord = { kind: 'sample', ...h };
  const L = ctx.layout;
  if (!L) return s;
  const t = L.sampleType;
  if (has(t, SampleType.IDENTIFIER)) s.identifier = r.u64();
  if (has(t, SampleType.IP)) s.ip = r.u64();
  if (has(t, SampleType.TID)) {
    s.pid = r.i32();
    s.tid = r.i32();
  }
  if (has(t, SampleType.TIME)) s.time = r.u64();
  if (has(t, SampleType.ADDR)) s.addr = r.u64();
  if (has(t, SampleType.ID)) s.id = r.u64();
  if (has(t, SampleType.STREAM_ID)) s.streamId = r.u64();
  if (has(t, SampleType.CPU)) {
    s.cpu = r.u32();
    s.cpuRes = r.u32();
  }
  if (has(t, SampleType.PERIOD)) s.period = r.u64();
  if (has(t, SampleType.READ)) s.read = decodeReadFormat(r, L.readFormat);
  if (has(t, SampleType.CALLCHAIN)) {
    const n = count(r, 'SAMPLE callchain nr', 8);
    s.callchain = [];
    for (let i = 0; i < n; i++) s.callchain.push(r.u64());
  }
  if (has(t, SampleType.RAW)) {
    const at = r.pos;
    const n = r.u32();
    if (n > r.remaining) {
      throw new FormatError({
        kind: 'bad-size',
        offset: r.base + at,
        structure: 'SAMPLE raw size',
        actual: n,
        expected: `≤ ${r.remaining}`,
      });
    }
    s.raw = r.copy(n);
  }
  if (has(t, SampleType.BRANCH_STACK)) {
    const at = r.pos;
    const n = r.u64n('SAMPLE branch_stack nr');
    const hwIdx = L.branchHwIndex ? r.u64() : undefined;
    if (n * 24 > r.remaining) {
      throw new FormatError({
        kind: 'bad-size',
        offset: r.base + at,
        structure: 'SAMPLE branch_stack nr',
        actual: n,
        expected: 'entries that fit in the record',
      });
    }
    const entries = [];
    for (let i = 0; i < n; i++) entries.push({ from: r.u64(), to: r.u64(), flags: r.u64() });
    s.branchStack = hwIdx === undefined ? { entries } : { hwIdx, entries };
  }
  if (has(t, SampleType.REGS_USER)) s.regsUser = regs(r, L.nrRegsUser);
  if (has(t, SampleType.STACK_USER)) {
    const n = count(r, 'SAMPLE stack_user size', 1);
    const data = r.copy(n);
    s.stackUser = n ? { data, dynSize: r.u64() } : { data };
  }
  if (has(t, SampleType.WEIGHT) || has(t, SampleType.WEIGHT_STRUCT)) s.weight = r.u64();
  if (has(t, SampleType.DATA_SRC)) s.dataSrc = r.u64();
  if (has(t, SampleType.TRANSACTION)) s.transaction = r.u64();
  if (has(t, SampleType.REGS_INTR)) s.regsIntr = regs(r, L.nrRegsIntr);
  if (has(t, SampleType.PHYS_ADDR)) s.physAddr = r.u64();
  if (has(t, SampleType.CGROUP)) s.cgroup = r.u64();
  if (has(t, SampleType.DATA_PAGE_SIZE)) s.dataPageSize = r.u64();
  if (has(t, SampleType.CODE_PAGE_SIZE)) s.codePageSize = r.u64();
  if (has(t, SampleType.AUX)) {
    const n = count(r, 'SAMPLE aux size', 1);
    s.aux = r.copy(n);
  }
  return s;
}

export function encodeSample(s: SampleRecord, w: ByteWriter, L?: AttrLayout): void {
  if (!L) return;
  const t = L.sampleType;
  if (has(t, SampleType.IDENTIFIER)) w.u64(s.identifier ?? 0n);
  if (has(t, SampleType.IP)) w.u64(s.ip ?? 0n);
  if (has(t, SampleType.TID)) w.i32(s.pid ?? 0).i32(s.tid ?? 0);
  if (has(t, SampleType.TIME)) w.u64(s.time ?? 0n);
  if (has(t, SampleType.ADDR)) w.u64(s.addr ?? 0n);
  if (has(t, SampleType.ID)) w.u64(s.id ?? 0n);
  if (has(t, SampleType.STREAM_ID)) w.u64(s.streamId ?? 0n);
  if (has(t, SampleType.CPU)) w.u32(s.cpu ?? 0).u32(s.cpuRes ?? 0);
  if (has(t, SampleType.PERIOD)) w.u64(s.period ?? 0n);
  if (has(t, SampleType.READ)) encodeReadFormat(s.read ?? { values: [], group: false }, w, L.readFormat);
  if (has(t, SampleType.CALLCHAIN)) {
    const cc = s.callchain ?? [];
    w.u64(cc.length);
    for (const ip of cc) w.u64(ip);
  }
  if (has(t, SampleType.RAW)) {
    const raw = s.raw ?? new Uint8Array(0);
    w.u32(raw.length).bytes(raw);
  }
  if (has(t, SampleType.BRANCH_STACK)) {
    const bs = s.branchStack ?? { entries: [] };
    w.u64(bs.entries.length);
    if (L.branchHwIndex) w.u64(bs.hwIdx ?? 0n);
    for (const e of bs.entries) w.u64(e.from).u64(e.to).u64(e.flags);
  }
  const putRegs = (x: { abi: bigint; regs: bigint[] } | undefined): void => {
    w.u64(x?.abi ?? 0n);
    if (x && x.abi !== 0n) for (const v of x.regs) w.u64(v);
  };
  if (has(t, SampleType.REGS_USER)) putRegs(s.regsUser);
  if (has(t, SampleType.STACK_USER)) {
    const su = s.stackUser ?? { data: new Uint8Array(0) };
    w.u64(su.data.length).bytes(su.data);
    if (su.data.length) w.u64(su.dynSize ?? 0n);
  }
  if (has(t, SampleType.WEIGHT) || has(t, SampleType.WEIGHT_STRUCT)) w.u64(s.weight ?? 0n);
  if (has(t, SampleType.DATA_SRC)) w.u64(s.dataSrc ?? 0n);
  if (has(t, SampleType.TRANSACTION)) w.u64(s.transaction ?? 0n);
  if (has(t, SampleType.REGS_INTR)) putRegs(s.regsIntr);
  if (has(t, SampleType.PHYS_ADDR)) w.u64(s.physAddr ?? 0n);
  if (has(t, SampleType.CGROUP)) w.u64(s.cgroup ?? 0n);
  if (has(t, SampleType.DATA_PAGE_SIZE)) w.u64(s.dataPageSize ?? 0n);
  if (has(t, SampleType.CODE_PAGE_SIZE)) w.u64(s.codePageSize ?? 0n);
  if (has(t, SampleType.AUX)) {
    const aux = s.aux ?? new Uint8Array(0);
    w.u64(aux.length).bytes(aux);
  }
}
