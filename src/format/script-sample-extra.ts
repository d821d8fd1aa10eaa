/**
 * The `perf script` sample columns past the basic ones, as perf 6.1 prints
 * them (builtin-script.c perf_sample__fprintf_start and process_event):
 * misc, data_src (util/mem-events.c perf_script__meminfo_scnprintf), weight,
 * ins_lat, iregs/uregs, insnlen/insn, phys_addr and the page sizes.
 */
import { SampleType } from '../abi/sample-format.js';
import type { EventAttr } from '../abi/event-attr.js';
import { RecordType } from '../abi/record-type.js';
import type { SampleRecord } from '../perfdata/index.js';
import type { ScriptField } from './perf-script-fields.js';
import { pageSizeName, regName } from './perf-dump-sample.js';

const MISC_COMM_EXEC = 1 << 13; // also MMAP_DATA and SWITCH_OUT
const MISC_SWITCH_OUT_PREEMPT = 1 << 14;

/**
 * The `misc` column: K/U/H/G/g tested as perf does, `(misc & M) == M` on the
 * cpumode values (so a hypervisor record shows "KUH"), then M/E/S/p by
 * record type, padded to 6.
 */
export function miscColumn(misc: number, recordType: number): string {
  const has = (m: number): boolean => (misc & m) === m;
  let s = '';
  if (has(1)) s += 'K';
  if (has(2)) s += 'U';
  if (has(3)) s += 'H';
  if (has(4)) s += 'G';
  if (has(5)) s += 'g';
  const t = recordType;
  if ((t === RecordType.MMAP || t === RecordType.MMAP2) && has(MISC_COMM_EXEC)) s += 'M';
  else if (t === RecordType.COMM && has(MISC_COMM_EXEC)) s += 'E';
  else if ((t === RecordType.SWITCH || t === RecordType.SWITCH_CPU_WIDE) && has(MISC_COMM_EXEC)) {
    s += 'S';
    if (misc & MISC_SWITCH_OUT_PREEMPT) s += 'p';
  }
  // fprintf("%*s", 6 - ret, " ")
  return s + ' '.padStart(Math.max(1, 6 - s.length));
}

const TLB = ['N/A', 'HIT', 'MISS', 'L1', 'L2', 'Walker', 'Fault'];
const LVL = [
  'N/A',
  'HIT',
  'MISS',
  'L1',
  'LFB/MAB',
  'L2',
  'L3',
  'Local RAM',
  'Remote RAM (1 hop)',
  'Remote RAM (2 hops)',
  'Remote Cache (1 hop)',
  'Remote Cache (2 hops)',
  'I/O',
  'Uncached',
];
const LVLNUM: Record<number, string> = {
  9: 'CXL',
  10: 'I/O',
  11: 'Any cache',
  12: 'LFB/MAB',
  13: 'RAM',
  14: 'PMEM',
  15: 'N/A',
};
const HOPS = ['N/A', 'core, same node', 'node, same socket', 'socket, same board', 'board'];
const SNOOP = ['N/A', 'None', 'Hit', 'Miss', 'HitM'];
const SNOOPX = ['Fwd', 'Peer'];

/** union perf_mem_data_src's bit fields (little-endian layout). */
function bits(v: bigint, shift: number, width: number): number {
  return Number((v >> BigInt(shift)) & ((1n << BigInt(width)) - 1n));
}

/** Names of the set bits of m, lowest first, joined with " or ". */
function orList(m: number, names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; m && i < names.length; i++, m >>= 1) if (m & 1) out.push(names[i]!);
  return out;
}

function opText(op: number): string {
  if (op & 1) return 'N/A';
  if (op & 2) return 'LOAD';
  if (op & 4) return 'STORE';
  if (op & 8) return 'PFETCH';
  if (op & 16) return 'EXEC';
  return 'No';
}

/** perf 6.1 perf_mem__lvl_scnprintf: the LVL bits (or the hops), then the level number. */
function lvlText(ds: bigint): string {
  let m = bits(ds, 5, 14);
  const hit = m & 2;
  const miss = m & 4;
  m &= ~6;
  let out = bits(ds, 37, 1) ? 'Remote ' : '';
  const hops = bits(ds, 43, 3);
  const parts = hops ? [] : orList(m, LVL);
  // perf 6.1 indexes its 5-entry table with the 3-bit field: 5..7 print "(null)"
  if (hops) out += `${HOPS[hops] ?? '(null)'} `;
  const lvlNum = bits(ds, 33, 4);
  if (lvlNum) parts.push(LVLNUM[lvlNum] ?? `L${lvlNum}`);
  out += parts.join(' or ');
  if (out === '') out = 'N/A';
  if (hit) out += ' hit';
  if (miss) out += ' miss';
  return out;
}

function snpText(ds: bigint): string {
  const parts = [...orList(bits(ds, 19, 5), SNOOP), ...orList(bits(ds, 38, 2), SNOOPX)];
  return parts.length ? parts.join(' or ') : 'N/A';
}

function tlbText(ds: bigint): string {
  const m = bits(ds, 26, 7);
  let out = orList(m & ~6, TLB).join(' or ') || 'N/A';
  if (m & 2) out += ' hit';
  if (m & 4) out += ' miss';
  return out;
}

function blkText(ds: bigint): string {
  const m = bits(ds, 40, 3);
  if (!m || m & 1) return ' N/A';
  return (m & 2 ? ' Data' : '') + (m & 4 ? ' Addr' : '');
}

function lckText(ds: bigint): string {
  const m = bits(ds, 24, 2);
  return m & 1 ? 'N/A' : m & 2 ? 'Yes' : 'No';
}

/** perf_script__meminfo_scnprintf's text for a data_src value. */
export function dataSrcText(ds: bigint): string {
  return (
    `|OP ${opText(bits(ds, 0, 5))}|LVL ${lvlText(ds)}|SNP ${snpText(ds)}|TLB ${tlbText(ds)}` +
    `|LCK ${lckText(ds)}|BLK ${blkText(ds)}`
  );
}

/** " ABI:n  NAME:0x… …" (perf_sample__fprintf_regs), or '' for a sample without registers. */
export function regsText(regs: { abi: bigint; regs: bigint[] } | undefined, mask: bigint): string {
  if (!regs || regs.abi === 0n) return '';
  let s = ` ABI:${regs.abi} `;
  let i = 0;
  for (let r = 0; r < 64; r++) {
    if (!((mask >> BigInt(r)) & 1n)) continue;
    s += `${regName(r).padStart(5)}:0x${(regs.regs[i++] ?? 0n).toString(16)} `;
  }
  return s;
}

/** weight, ins_lat of a sample: WEIGHT_STRUCT splits the u64 (var1_dw, var2_w). */
export function weights(rec: SampleRecord, attr: EventAttr | undefined): { weight: bigint; insLat: number } {
  const w = rec.weight ?? 0n;
  if (attr && (attr.sampleType & SampleType.WEIGHT_STRUCT) !== 0n && (attr.sampleType & SampleType.WEIGHT) === 0n)
    return { weight: w & 0xffffffffn, insLat: Number((w >> 32n) & 0xffffn) };
  return { weight: w, insLat: 0 };
}

/** What the extra columns need beside the sample. */
export interface ExtraContext {
  attr: EventAttr | undefined;
  /** The bytes of the instruction at ip (perf's script_fetch_insn), when insn or insnlen is printed. */
  insn?: Uint8Array;
  /** The brstack / brstacksym / brstackoff text (script-brstack.ts). */
  brstack?: string;
}

/**
 * The columns perf prints between addr and ip, and those after ip (and after
 * the callchain when there is one); `dataSrcWidth` is perf's static maxlen of
 * data_src__fprintf, kept by the caller for the whole run.
 */
export class SampleExtras {
  private dataSrcWidth = 0;

  beforeIp(f: ReadonlySet<ScriptField>, rec: SampleRecord, c: ExtraContext): string {
    let s = '';
    if (f.has('data_src')) {
      const ds = rec.dataSrc ?? 0n;
      // perf formats into char decode[100] and char out[100]: both cut at 99 characters
      const text = `${ds.toString(16).padStart(16)} ${dataSrcText(ds).slice(0, 99)}`.slice(0, 99);
      this.dataSrcWidth = Math.max(this.dataSrcWidth, text.length);
      s += text.padEnd(this.dataSrcWidth);
    }
    if (f.has('weight') || f.has('ins_lat')) {
      const w = weights(rec, c.attr);
      if (f.has('weight')) s += w.weight.toString().padStart(16);
      if (f.has('ins_lat')) s += String(w.insLat).padStart(16);
    }
    return s;
  }

  afterIp(f: ReadonlySet<ScriptField>, rec: SampleRecord, c: ExtraContext): string {
    let s = '';
    if (f.has('iregs')) s += regsText(rec.regsIntr, c.attr?.sampleRegsIntr ?? 0n);
    if (f.has('uregs')) s += regsText(rec.regsUser, c.attr?.sampleRegsUser ?? 0n);
    s += c.brstack ?? '';
    const insn = c.insn ?? new Uint8Array(0);
    if (f.has('insnlen')) s += ` ilen: ${insn.length}`;
    if (f.has('insn') && insn.length > 0) s += ` insn:${Array.from(insn, (b) => ` ${hex2(b)}`).join('')}`;
    if (f.has('phys_addr')) s += (rec.physAddr ?? 0n).toString(16).padStart(16);
    if (f.has('data_page_size')) s += ` ${pageSizeName(rec.dataPageSize ?? 0n)}`;
    if (f.has('code_page_size')) s += ` ${pageSizeName(rec.codePageSize ?? 0n)}`;
    return s;
  }
}

/** The extra columns as JSON members (docs/json/sample.schema.json). */
export function extrasJson(f: ReadonlySet<ScriptField>, rec: SampleRecord, c: ExtraContext): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const hex = (v: bigint | undefined): string => `0x${(v ?? 0n).toString(16)}`;
  const regs = (r: { abi: bigint; regs: bigint[] } | undefined, mask: bigint) => {
    if (!r || r.abi === 0n) return undefined;
    const named: Record<string, string> = {};
    let i = 0;
    for (let b = 0; b < 64; b++) if ((mask >> BigInt(b)) & 1n) named[regName(b)] = hex(r.regs[i++]);
    return { abi: Number(r.abi), regs: named };
  };
  if (f.has('data_src')) o.data_src = hex(rec.dataSrc);
  const w = weights(rec, c.attr);
  if (f.has('weight')) o.weight = Number(w.weight);
  if (f.has('ins_lat')) o.ins_lat = w.insLat;
  if (f.has('iregs')) o.iregs = regs(rec.regsIntr, c.attr?.sampleRegsIntr ?? 0n);
  if (f.has('uregs')) o.uregs = regs(rec.regsUser, c.attr?.sampleRegsUser ?? 0n);
  if (f.has('insnlen')) o.insnlen = c.insn?.length ?? 0;
  if (f.has('insn')) o.insn = [...(c.insn ?? [])].map(hex2).join(' ');
  if (f.has('phys_addr')) o.phys_addr = hex(rec.physAddr);
  if (f.has('data_page_size')) o.data_page_size = Number(rec.dataPageSize ?? 0n);
  if (f.has('code_page_size')) o.code_page_size = Number(rec.codePageSize ?? 0n);
  return o;
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}
