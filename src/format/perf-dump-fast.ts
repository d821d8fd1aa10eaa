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
import type { ByteText } from '../io/byte-text.js';
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

/** u32 at b[o], in the record's byte order (byte loads: no DataView per record). */
const u32le = (b: Uint8Array, o: number): number =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const u32be = (b: Uint8Array, o: number): number =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

const C_SPACE = 0x20;
const C_NL = 0x0a;
const C_SLASH = 0x2f;

/** The fixed pieces of a sample's text, as bytes (copied in, not encoded per sample). */
const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const SAMPLE_IP = enc(']: PERF_RECORD_SAMPLE(IP, 0x');
const PERIOD = enc(' period: ');
const ADDR = enc(' addr: ');
const NO_TID = enc('-1/-1: ');
const NO_CPU = enc('4294967295 ');
const NO_TIME = enc('18446744073709551615 ');
const FP_CHAIN = enc('... FP chain: nr:');
const CHAIN_ENTRY = enc('..... ');
const WEIGHT = enc('... weight: ');
const DATA_SRC = enc(' . data_src: 0x');
const PHYS_ADDR = enc(' .. phys_addr: 0x');
const DATA_PAGE = enc(' .. data page size: ');
const CODE_PAGE = enc(' .. code page size: ');
const TRANSACTION = enc('... transaction: ');
const OPEN_SIZE = enc(' [0x');

/** C's "%#lx": "0" for zero, else "0x" and the digits. */
function hexAlt64(out: ByteText, hi: number, lo: number): void {
  if (hi === 0 && lo === 0) out.byte(0x30);
  else {
    out.byte(0x30);
    out.byte(0x78);
    out.hex64(hi, lo);
  }
}

type U32At = (b: Uint8Array, o: number) => number;

/** "..... %2d: %016lx\n" for each of the `nr` callchain entries at b[o…]: most of a -g dump's bytes. */
function chainLines(out: ByteText, b: Uint8Array, o: number, nr: number, u32: U32At, H: number, Lo: number): void {
  for (let i = 0; i < nr; i++, o += 8) {
    if (i >= 100) {
      out.append(CHAIN_ENTRY);
      out.dec(i, 2);
      out.byte(0x3a);
      out.byte(C_SPACE);
    } else {
      // "..... " and the index as two columns, written in place
      out.reserve(10);
      const t = out.buf;
      const n = out.length;
      t[n] = t[n + 1] = t[n + 2] = t[n + 3] = t[n + 4] = 0x2e;
      t[n + 5] = C_SPACE;
      t[n + 6] = i < 10 ? C_SPACE : 0x30 + ((i / 10) | 0);
      t[n + 7] = 0x30 + (i % 10);
      t[n + 8] = 0x3a;
      t[n + 9] = C_SPACE;
      out.length = n + 10;
    }
    out.hex16(u32(b, o + H), u32(b, o + Lo));
    out.byte(C_NL);
  }
}

/** One of dump_sample's lines after the callchain: `label`, the u64 at b[o] (0 decimal, 1 hex, 2 page size). */
function tailLine(
  out: ByteText,
  label: Uint8Array,
  b: Uint8Array,
  o: number,
  u32: U32At,
  H: number,
  Lo: number,
  kind: 0 | 1 | 2,
): void {
  const hi = u32(b, o + H);
  const lo = u32(b, o + Lo);
  out.append(label);
  if (kind === 0) out.dec64(hi, lo);
  else if (kind === 1) out.hex64(hi, lo);
  else out.str(pageSizeName((BigInt(hi) << 32n) | BigInt(lo)));
  out.byte(C_NL);
}

/**
 * Append to `out` the summary line's "<cpu> <time> " prefix, the offset, and
 * everything after it for a sample, and return true; or return false with
 * nothing appended when the general path must print it. `prefixCpu` /
 * `prefixTime`: whether perf's combined sample_type has CPU / TIME
 * (evlist__print_tstamp). `off`: the offset perf prints.
 */
export function fastSampleBytes(
  out: ByteText,
  raw: RawRecord,
  prefixCpu: boolean,
  prefixTime: boolean,
  off: number,
): boolean {
  const L = raw.layout;
  if (!L) return false;
  const p = planFor(L);
  if (!p) return false;
  // the record is b[a, a + size): read in place (a view per record was ~4 % of dump's time)
  const b = raw.buf;
  const a = raw.off;
  const size = raw.length;
  if (size < p.fixedEnd) return false;
  const le = raw.le;
  const u32 = le ? u32le : u32be;
  // the halves of the u64 at o
  const H = le ? 4 : 0;
  const Lo = le ? 0 : 4;
  let nr = 0;
  let tailAt = p.fixedEnd;
  if (p.callchain >= 0) {
    if (size < p.callchain + 8) return false;
    const nhi = u32(b, a + p.callchain + H);
    nr = u32(b, a + p.callchain + Lo);
    if (nhi !== 0 || nr * 8 > size - p.callchain - 8) return false; // the general path reports it
    tailAt = p.callchain + 8 + nr * 8;
  }
  if (tailAt + p.tailWords * 8 > size) return false;

  if (prefixCpu) {
    if (p.cpu >= 0) {
      out.dec(u32(b, a + p.cpu));
      out.byte(C_SPACE);
    } else out.append(NO_CPU);
  }
  if (prefixTime) {
    if (p.time >= 0) {
      out.dec64(u32(b, a + p.time + H), u32(b, a + p.time + Lo));
      out.byte(C_SPACE);
    } else out.append(NO_TIME);
  }
  if (off === 0) out.byte(0x30);
  else {
    out.byte(0x30);
    out.byte(0x78);
    out.hex(off);
  }
  out.append(OPEN_SIZE);
  out.hex(size);
  out.append(SAMPLE_IP);
  out.hex(raw.misc);
  out.byte(0x29); // ')'
  out.byte(0x3a);
  out.byte(C_SPACE);
  if (p.tid >= 0) {
    out.decSigned(u32(b, a + p.tid) | 0);
    out.byte(C_SLASH);
    out.decSigned(u32(b, a + p.tid + 4) | 0);
    out.byte(0x3a);
    out.byte(C_SPACE);
  } else out.append(NO_TID);
  if (p.ip >= 0) hexAlt64(out, u32(b, a + p.ip + H), u32(b, a + p.ip + Lo));
  else out.byte(0x30);
  out.append(PERIOD);
  if (p.period >= 0) out.dec64(u32(b, a + p.period + H), u32(b, a + p.period + Lo));
  else out.str(p.attrPeriod);
  out.append(ADDR);
  if (p.addr >= 0) hexAlt64(out, u32(b, a + p.addr + H), u32(b, a + p.addr + Lo));
  else out.byte(0x30);
  out.byte(C_NL);
  if (p.callchain >= 0) {
    out.append(FP_CHAIN);
    out.dec(nr);
    out.byte(C_NL);
    chainLines(out, b, a + p.callchain + 8, nr, u32, H, Lo);
  }
  // dump_sample's order, which is not the record's for TRANSACTION
  if (p.weight >= 0) tailLine(out, WEIGHT, b, a + tailAt + p.weight, u32, H, Lo, 0);
  if (p.dataSrc >= 0) tailLine(out, DATA_SRC, b, a + tailAt + p.dataSrc, u32, H, Lo, 1);
  if (p.physAddr >= 0) tailLine(out, PHYS_ADDR, b, a + tailAt + p.physAddr, u32, H, Lo, 1);
  if (p.dataPage >= 0) tailLine(out, DATA_PAGE, b, a + tailAt + p.dataPage, u32, H, Lo, 2);
  if (p.codePage >= 0) tailLine(out, CODE_PAGE, b, a + tailAt + p.codePage, u32, H, Lo, 2);
  if (p.transaction >= 0) tailLine(out, TRANSACTION, b, a + tailAt + p.transaction, u32, H, Lo, 1);
  return true;
}
