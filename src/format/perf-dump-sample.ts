/**
 * The parts of `perf script -D` that are not one line per record: perf's hex
 * dump of a record (trace_event) and dump_sample's detail lines (callchain,
 * branch stack, registers, user stack, weight, data source, sample_read).
 */
import type { SampleRecord } from '../perfdata/records/index.js';
import type { AttrLayout } from '../perfdata/layout.js';
import { SampleType, ReadFormat } from '../abi/sample-format.js';
import { hexAlt } from './perf-event-text.js';
import { hex016, hex2 } from '../io/hex.js';

const has = (t: bigint, b: bigint): boolean => (t & b) !== 0n;

/** trace_event(): perf's hex dump of a record (the lines starting with "."). */
export function hexDump(bytes: Uint8Array): string {
  let s = `.\n. ... raw event: size ${bytes.length} bytes\n`;
  for (let i = 0; i < bytes.length; i += 16) {
    const line = bytes.subarray(i, i + 16);
    s += `.  ${i.toString(16).padStart(4, '0')}: `;
    for (const b of line) s += ` ${hex2(b)}`;
    s += `${'   '.repeat(16 - line.length)}  `;
    for (const b of line) s += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    s += `${' '.repeat(16 - line.length)}\n`;
  }
  return `${s}\n`;
}

/** cpu_map__snprint: "0-3,5,7-8". */
export function cpuList(cpus: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j]! + 1 && cpus[i]! >= 0) j++;
    out.push(j > i ? `${cpus[i]}-${cpus[j]}` : `${cpus[i]}`);
    i = j + 1;
  }
  return out.join(',');
}

/** perf_reg_name for x86 (arch/x86/include/uapi/asm/perf_regs.h order). */
const X86_REGS = [
  'AX',
  'BX',
  'CX',
  'DX',
  'SI',
  'DI',
  'BP',
  'SP',
  'IP',
  'FLAGS',
  'CS',
  'SS',
  'DS',
  'ES',
  'FS',
  'GS',
  'R8',
  'R9',
  'R10',
  'R11',
  'R12',
  'R13',
  'R14',
  'R15',
];
/** perf_reg_name for x86: the register of sample_regs bit i. */
export function regName(i: number): string {
  if (i < X86_REGS.length) return X86_REGS[i]!;
  if (i >= 32 && i < 64) return `XMM${(i - 32) >> 1}`; // perf names both halves XMMn
  return 'unknown';
}
const REGS_ABI = ['none', '32-bit', '64-bit'];

function regsLines(kind: string, mask: bigint, r: { abi: bigint; regs: bigint[] }): string {
  if (r.abi === 0n) return '';
  let s = `... ${kind} regs: mask 0x${mask.toString(16)} ABI ${REGS_ABI[Number(r.abi)] ?? 'unknown'}\n`;
  let k = 0;
  for (let bit = 0; bit < 64; bit++) {
    if (!((mask >> BigInt(bit)) & 1n)) continue;
    s += `.... ${regName(bit).padEnd(5)} 0x${hex016(r.regs[k++] ?? 0n)}\n`;
  }
  return s;
}

/**
 * get_page_size_name (perf 6.1 util/units.c unit_number__scnprintf): divide
 * by 1024 while the quotient is above 1, at most to G, and print the unit
 * letter ("4K", "2M", "1024B", "3B"); 0 is "N/A".
 */
export function pageSizeName(v: bigint): string {
  if (!v) return 'N/A';
  const units = 'BKMG';
  let u = 0;
  while (v / 1024n > 1n && u < 3) {
    v /= 1024n;
    u++;
  }
  return `${v}${units[u]}`;
}

/** dump_sample(): "(IP, 0x<misc>): pid/tid: 0xip period: N addr: 0x..." and the detail lines. */
export function sampleText(s: SampleRecord, L: AttrLayout | undefined): string {
  const period = s.period ?? L?.attr.samplePeriod ?? 0n;
  let out =
    `(IP, 0x${s.misc.toString(16)}): ${s.pid ?? -1}/${s.tid ?? -1}: ${hexAlt(s.ip ?? 0n)} period: ` +
    `${period} addr: ${hexAlt(s.addr ?? 0n)}\n`;
  if (!L) return out;
  const t = L.sampleType;
  if (has(t, SampleType.CALLCHAIN) && s.callchain) {
    out += `... FP chain: nr:${s.callchain.length}\n`;
    s.callchain.forEach((ip, i) => {
      out += `..... ${String(i).padStart(2)}: ${hex016(ip)}\n`;
    });
  }
  if (has(t, SampleType.BRANCH_STACK) && s.branchStack) {
    out += `... branch stack: nr:${s.branchStack.entries.length}\n`;
    s.branchStack.entries.forEach((e, i) => {
      const f = e.flags;
      const bit = (n: number): boolean => ((f >> BigInt(n)) & 1n) === 1n;
      const cycles = Number((f >> 4n) & 0xffffn);
      out +=
        `..... ${String(i).padStart(2)}: ${hex016(e.from)} -> ${hex016(e.to)} ${cycles} cycles ` +
        `${bit(0) ? 'M' : ' '}${bit(1) ? 'P' : ' '}${bit(3) ? 'A' : ' '}${bit(2) ? 'T' : ' '} ` +
        `${Number(f >> 24n).toString(16)}\n`;
    });
  }
  if (has(t, SampleType.REGS_USER) && s.regsUser) out += regsLines('user', L.attr.sampleRegsUser, s.regsUser);
  if (has(t, SampleType.REGS_INTR) && s.regsIntr) out += regsLines('intr', L.attr.sampleRegsIntr, s.regsIntr);
  if (has(t, SampleType.STACK_USER) && s.stackUser) {
    // evsel__parse_sample: size is dyn_size (what the kernel really copied); offset points at the size field
    const su = s.stackUser;
    out += su.data.length
      ? `... ustack: size ${su.dynSize ?? 0n}, offset 0x${stackOffset(s, L).toString(16)}\n`
      : '... ustack: size 0, offset 0x0\n';
  }
  if ((has(t, SampleType.WEIGHT) || has(t, SampleType.WEIGHT_STRUCT)) && s.weight !== undefined) {
    if (has(t, SampleType.WEIGHT_STRUCT)) {
      const w = s.weight;
      const hi = (shift: bigint): string => ((w >> shift) & 0xffffn).toString(16);
      out += `... weight: ${w & 0xffffffffn},0x${hi(32n)},0x${hi(48n)}\n`;
    } else out += `... weight: ${s.weight}\n`;
  }
  if (has(t, SampleType.DATA_SRC)) out += ` . data_src: 0x${(s.dataSrc ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.PHYS_ADDR)) out += ` .. phys_addr: 0x${(s.physAddr ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.DATA_PAGE_SIZE)) out += ` .. data page size: ${pageSizeName(s.dataPageSize ?? 0n)}\n`;
  if (has(t, SampleType.CODE_PAGE_SIZE)) out += ` .. code page size: ${pageSizeName(s.codePageSize ?? 0n)}\n`;
  if (has(t, SampleType.TRANSACTION)) out += `... transaction: ${(s.transaction ?? 0n).toString(16)}\n`;
  if (has(t, SampleType.READ) && s.read) {
    const rf = L.readFormat;
    out += '... sample_read:\n';
    if (has(rf, ReadFormat.TOTAL_TIME_ENABLED)) out += `...... time enabled ${hex016(s.read.timeEnabled ?? 0n)}\n`;
    if (has(rf, ReadFormat.TOTAL_TIME_RUNNING)) out += `...... time running ${hex016(s.read.timeRunning ?? 0n)}\n`;
    const lost = (v: { lost?: bigint }): string => (has(rf, ReadFormat.LOST) ? `, lost ${v.lost ?? 0n}` : '');
    if (has(rf, ReadFormat.GROUP)) {
      out += `.... group nr ${s.read.values.length}\n`;
      for (const v of s.read.values) out += `..... id ${hex016(v.id ?? 0n)}, value ${hex016(v.value)}${lost(v)}\n`;
    } else {
      const v = s.read.values[0] ?? { value: 0n };
      out += `..... id ${hex016(v.id ?? 0n)}, value ${hex016(v.value)}${lost(v)}\n`;
    }
  }
  return out;
}

/** perf's stack_dump.offset: where the user stack data starts inside the record (bytes from the record start). */
function stackOffset(s: SampleRecord, L: AttrLayout): number {
  // recompute by walking the fields before STACK_USER, as evsel__parse_sample does
  const t = L.sampleType;
  let off = 8;
  for (const b of [
    SampleType.IDENTIFIER,
    SampleType.IP,
    SampleType.TID,
    SampleType.TIME,
    SampleType.ADDR,
    SampleType.ID,
    SampleType.STREAM_ID,
    SampleType.CPU,
    SampleType.PERIOD,
  ])
    if (has(t, b)) off += 8;
  if (has(t, SampleType.READ) && s.read) {
    const rf = L.readFormat;
    const per = 8 + (has(rf, ReadFormat.ID) ? 8 : 0) + (has(rf, ReadFormat.LOST) ? 8 : 0);
    const times = (has(rf, ReadFormat.TOTAL_TIME_ENABLED) ? 8 : 0) + (has(rf, ReadFormat.TOTAL_TIME_RUNNING) ? 8 : 0);
    off += has(rf, ReadFormat.GROUP) ? 8 + times + per * s.read.values.length : per + times;
  }
  if (has(t, SampleType.CALLCHAIN)) off += 8 + 8 * (s.callchain?.length ?? 0);
  if (has(t, SampleType.RAW)) off += 4 + (s.raw?.length ?? 0);
  if (has(t, SampleType.BRANCH_STACK)) off += 8 + (L.branchHwIndex ? 8 : 0) + 24 * (s.branchStack?.entries.length ?? 0);
  if (has(t, SampleType.REGS_USER)) off += 8 + (s.regsUser?.abi ? 8 * s.regsUser.regs.length : 0);
  return off; // perf: offset of the u64 size field (evsel__parse_sample keeps array - 1)
}
