/**
 * The `perf script -D` text of a SAMPLE read straight from the record bytes,
 * without building the decoded object: samples are ~95% of a `perf record`
 * file, and decoding each one into an object with a BigInt per callchain
 * entry (then printing those BigInts) cost more than half of `dump`'s time,
 * most of it in the garbage collector.
 *
 * Only the sample layouts whose every field it knows are taken (perf
 * record's usual IP|TID|TIME|ADDR|ID|CPU|PERIOD|CALLCHAIN|DATA_SRC… and the
 * like); a record too short for its fields, or a layout with READ, RAW,
 * branch stacks, registers, user stacks, WEIGHT_STRUCT or AUX returns
 * undefined and takes the general path (perf-dump-sample.ts), which is also
 * the one that raises FormatErrors. The text is the general path's, byte for
 * byte: test/dump.test.ts compares both with perf.
 */
import { SampleType } from '../abi/sample-format.js';
import type { AttrLayout } from '../perfdata/layout.js';
import type { RawRecord } from '../perfdata/raw-record.js';
import { pageSizeName } from './perf-dump-sample.js';
import { FIXED_SAMPLE_FIELDS, type FixedSampleOffsets, fixedSampleOffsets } from './sample-offsets.js';

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

/** Sample fields this module prints from bytes (with STREAM_ID, CGROUP: skipped, as perf -D does). */
const FAST_FIELDS =
  FIXED_SAMPLE_FIELDS |
  SampleType.CALLCHAIN |
  SampleType.WEIGHT |
  SampleType.DATA_SRC |
  SampleType.TRANSACTION |
  SampleType.PHYS_ADDR |
  SampleType.CGROUP |
  SampleType.DATA_PAGE_SIZE |
  SampleType.CODE_PAGE_SIZE;

/** Where one attr's sample fields sit (offsets from the record start; -1 = absent). */
interface SamplePlan extends Omit<FixedSampleOffsets, 'end'> {
  /** Offset of the callchain's nr, or -1. */
  callchain: number;
  /** Fixed fields before the callchain end here (the record's minimum size without a callchain). */
  fixedEnd: number;
  /** Offsets of the u64s after the callchain, from its end (-1 = absent). */
  weight: number;
  dataSrc: number;
  transaction: number;
  physAddr: number;
  dataPage: number;
  codePage: number;
  /** How many u64s follow the callchain. */
  tailWords: number;
  /** attr.sample_period, printed when the sample has no PERIOD. */
  attrPeriod: string;
}

const plans = new WeakMap<AttrLayout, SamplePlan | null>();

function planFor(L: AttrLayout): SamplePlan | null {
  let p = plans.get(L);
  if (p !== undefined) return p;
  const t = L.sampleType;
  if ((t & ~FAST_FIELDS) !== 0n) p = null;
  else {
    const { ip, tid, time, addr, cpu, period, end: fixedEnd } = fixedSampleOffsets(t);
    const callchain = has(t, SampleType.CALLCHAIN) ? fixedEnd : -1;
    // the u64s after the callchain, uapi order, counted from the callchain's end
    let off = 0;
    const at = (bit: bigint, n = 8): number => {
      if (!has(t, bit)) return -1;
      const o = off;
      off += n;
      return o;
    };
    const weight = at(SampleType.WEIGHT);
    const dataSrc = at(SampleType.DATA_SRC);
    const transaction = at(SampleType.TRANSACTION);
    const physAddr = at(SampleType.PHYS_ADDR);
    at(SampleType.CGROUP); // perf -D does not print it
    const dataPage = at(SampleType.DATA_PAGE_SIZE);
    const codePage = at(SampleType.CODE_PAGE_SIZE);
    p = {
      ip,
      tid,
      time,
      addr,
      cpu,
      period,
      callchain,
      fixedEnd,
      weight,
      dataSrc,
      transaction,
      physAddr,
      dataPage,
      codePage,
      tailWords: off / 8,
      attrPeriod: `${L.attr.samplePeriod}`,
    };
  }
  plans.set(L, p);
  return p;
}

/** "0000".."ffff": four hex digits per table entry, so a u64 is four lookups. */
let HEX4: string[] | undefined;
function hex4Table(): string[] {
  if (!HEX4) {
    HEX4 = new Array<string>(65536);
    for (let i = 0; i < 65536; i++) HEX4[i] = i.toString(16).padStart(4, '0');
  }
  return HEX4;
}

/** Callchain index labels as perf's "%2d" prints them. */
const IDX: string[] = [];
const idx = (i: number): string => {
  let s = IDX[i];
  if (s === undefined) {
    s = String(i).padStart(2);
    IDX[i] = s;
  }
  return s;
};

/** u64 as a decimal string (a Number when it fits 53 bits, else a BigInt). */
function dec64(hi: number, lo: number): string {
  return hi < 0x200000 ? String(hi * 4294967296 + lo) : String((BigInt(hi) << 32n) | BigInt(lo));
}

/** C's "%#lx" of a u64 given as two u32 halves. */
function hexAlt64(hi: number, lo: number): string {
  if (hi === 0) return lo === 0 ? '0' : `0x${lo.toString(16)}`;
  return `0x${hi.toString(16)}${lo.toString(16).padStart(8, '0')}`;
}

/** "%lx" of a u64. */
function hex64(hi: number, lo: number): string {
  return hi === 0 ? lo.toString(16) : `${hi.toString(16)}${lo.toString(16).padStart(8, '0')}`;
}

const pageSize = (hi: number, lo: number): string => pageSizeName((BigInt(hi) << 32n) | BigInt(lo));

/**
 * The summary line's "<cpu> <time> " prefix and everything after
 * "PERF_RECORD_SAMPLE" for a sample, or undefined when the general path must
 * print it. `prefixCpu`/`prefixTime`: whether perf's combined sample_type has
 * CPU / TIME (evlist__print_tstamp). `offText`: the offset as perf prints it.
 */
export function fastSampleText(
  raw: RawRecord,
  prefixCpu: boolean,
  prefixTime: boolean,
  offText: string,
): string | undefined {
  const L = raw.layout;
  if (!L) return undefined;
  const p = planFor(L);
  if (!p) return undefined;
  const b = raw.bytes;
  const size = b.length;
  if (size < p.fixedEnd) return undefined;
  const le = raw.le;
  const dv = new DataView(b.buffer, b.byteOffset, size);
  // halves of the u64 at o
  const hiAt = (o: number): number => dv.getUint32(le ? o + 4 : o, le);
  const loAt = (o: number): number => dv.getUint32(le ? o : o + 4, le);
  let nr = 0;
  let tailAt = p.fixedEnd;
  if (p.callchain >= 0) {
    if (size < p.callchain + 8) return undefined;
    const nhi = hiAt(p.callchain);
    nr = loAt(p.callchain);
    if (nhi !== 0 || nr * 8 > size - p.callchain - 8) return undefined; // the general path reports it
    tailAt = p.callchain + 8 + nr * 8;
  }
  if (tailAt + p.tailWords * 8 > size) return undefined;

  let s = '';
  if (prefixCpu) s += p.cpu >= 0 ? `${dv.getUint32(p.cpu, le)} ` : '4294967295 ';
  if (prefixTime) s += p.time >= 0 ? `${dec64(hiAt(p.time), loAt(p.time))} ` : '18446744073709551615 ';
  s += `${offText} [0x${size.toString(16)}]: PERF_RECORD_SAMPLE(IP, 0x${raw.misc.toString(16)}): `;
  s += p.tid >= 0 ? `${dv.getInt32(p.tid, le)}/${dv.getInt32(p.tid + 4, le)}: ` : '-1/-1: ';
  s += p.ip >= 0 ? hexAlt64(hiAt(p.ip), loAt(p.ip)) : '0';
  s += ` period: ${p.period >= 0 ? dec64(hiAt(p.period), loAt(p.period)) : p.attrPeriod} addr: `;
  s += p.addr >= 0 ? hexAlt64(hiAt(p.addr), loAt(p.addr)) : '0';
  s += '\n';
  if (p.callchain >= 0) {
    const H = hex4Table();
    s += `... FP chain: nr:${nr}\n`;
    for (let i = 0, o = p.callchain + 8; i < nr; i++, o += 8) {
      const hi = hiAt(o);
      const lo = loAt(o);
      s += `..... ${idx(i)}: ${H[hi >>> 16]}${H[hi & 0xffff]}${H[lo >>> 16]}${H[lo & 0xffff]}\n`;
    }
  }
  // dump_sample's order, which is not the record's for TRANSACTION
  if (p.weight >= 0) s += `... weight: ${dec64(hiAt(tailAt + p.weight), loAt(tailAt + p.weight))}\n`;
  if (p.dataSrc >= 0) s += ` . data_src: 0x${hex64(hiAt(tailAt + p.dataSrc), loAt(tailAt + p.dataSrc))}\n`;
  if (p.physAddr >= 0) s += ` .. phys_addr: 0x${hex64(hiAt(tailAt + p.physAddr), loAt(tailAt + p.physAddr))}\n`;
  if (p.dataPage >= 0) s += ` .. data page size: ${pageSize(hiAt(tailAt + p.dataPage), loAt(tailAt + p.dataPage))}\n`;
  if (p.codePage >= 0) s += ` .. code page size: ${pageSize(hiAt(tailAt + p.codePage), loAt(tailAt + p.codePage))}\n`;
  if (p.transaction >= 0)
    s += `... transaction: ${hex64(hiAt(tailAt + p.transaction), loAt(tailAt + p.transaction))}\n`;
  return s;
}
