import { attrPreciseIp, AttrFlag, type EventAttr } from '../abi/event-attr.js';
import { featureName } from '../abi/feature.js';
import { featureIdOf } from '../perfdata/features/codec.js';
import type { FeatureData } from '../perfdata/features/types.js';
import { btfById, printBpfBtf, printBpfProgInfo } from './header-bpf.js';
import { Feature } from '../abi/feature.js';
import { formatNsTime, formatPerfTime } from '../machine/time-format.js';

/**
 * The `# key : value` lines perf 6.1 prints for each feature with
 * `perf report --header-only` (header.c print_* functions). `full` is -I:
 * without it the "full only" features print a one-line pointer instead.
 */
const FULL_ONLY = new Set(['cpu_topology', 'numa_topology', 'cache', 'mem_topology', 'hybrid_topology']);

export interface PrintContext {
  /** Every decoded feature of the file (group_desc needs event names, cpu_topology needs nrcpus). */
  all: FeatureData[];
  full: boolean;
  /** The file's byte order (perf prints bpf sections only when no swap is needed). */
  le?: boolean;
}

export function printFeature(f: FeatureData, ctx: PrintContext): string[] {
  if (FULL_ONLY.has(f.kind) && !ctx.full) return [`# ${featureName(featureIdOf(f))} info available, use -I to display`];
  switch (f.kind) {
    case 'hostname':
      return [`# hostname : ${f.value}`];
    case 'osrelease':
      return [`# os release : ${f.value}`];
    case 'version':
      return [`# perf version : ${f.value}`];
    case 'arch':
      return [`# arch : ${f.value}`];
    case 'cpudesc':
      return [`# cpudesc : ${f.value}`];
    case 'cpuid':
      return [`# cpuid : ${f.value}`];
    case 'nrcpus':
      return [`# nrcpus online : ${f.online}`, `# nrcpus avail : ${f.avail}`];
    case 'total_mem':
      return [`# total memory : ${f.kb} kB`];
    case 'cmdline':
      return [`# cmdline : ${f.argv.map((a) => `${a.split("'").join("\\'")} `).join('')}`];
    case 'event_desc':
      return f.events.map((e) => {
        let s = `# event : name = ${e.name}, `;
        if (e.ids.length) s += `, id = {${e.ids.map((id) => ` ${id}`).join(',')} }`;
        return (
          s +
          attrFields(e.attr)
            .map(([k, v]) => `, ${k} = ${v}`)
            .join('')
        );
      });
    case 'cpu_topology':
      return printCpuTopology(f, ctx);
    case 'numa_topology':
      return f.nodes.flatMap((n) => [
        `# node${n.node} meminfo  : total = ${n.memTotal} kB, free = ${n.memFree} kB`,
        `# node${n.node} cpu list : ${cpuListString(n.cpus)}`,
      ]);
    case 'pmu_mappings':
      if (f.pmus.length === 0) return ['# pmu mappings: not available'];
      return [`# pmu mappings: ${f.pmus.map((p) => `${p.name} = ${p.type}`).join(', ')}`];
    case 'group_desc':
      return printGroups(f, ctx);
    case 'cache':
      return [
        '# CPU cache info:',
        ...f.levels.map((c) => `#  L${c.level} ${c.type.padEnd(15)} ${c.size.padStart(8)} [${c.map}]`),
      ];
    case 'sample_time': {
      const d = Number(f.last - f.first) / 1e6;
      return [
        `# time of first sample : ${formatPerfTime(f.first)}`,
        `# time of last sample : ${formatPerfTime(f.last)}`,
        `# sample duration : ${d.toFixed(3).padStart(10)} ms`,
      ];
    }
    case 'mem_topology':
      return [
        `# memory nodes (nr ${f.nodes.length}, block size 0x${f.blockSize.toString(16)}):`,
        ...f.nodes.map((n) => {
          const set = bitsOf(n.words, n.bits);
          return (
            `#  ${String(n.node).padStart(3)} [${unitNumber(f.blockSize * BigInt(set.length))}]: ` +
            `${rangeList(set).slice(0, 99)}`
          );
        }),
      ];
    case 'clockid':
      return [`# clockid frequency: ${f.resNs * 1000n} MHz`];
    case 'dir_format':
      return [`# directory data version : ${f.version}`];
    case 'compressed':
      return [`# compressed : ${f.type === 1 ? 'Zstd' : 'Unknown'}, level = ${f.level | 0}, ratio = ${f.ratio | 0}`];
    case 'cpu_pmu_caps':
      return [pmuCapsLine('cpu', f.caps)];
    case 'pmu_caps':
      return f.pmus.map((p) => pmuCapsLine(p.pmuName, p.caps));
    case 'clock_data':
      return printClockData(f);
    case 'hybrid_topology':
      return ['# hybrid cpu system:', ...f.nodes.map((n) => `# ${n.pmuName} cpu list : ${n.cpus}`)];
    case 'branch_stack':
      return ['# contains samples with branch stack'];
    case 'auxtrace':
      return ['# contains AUX area data (e.g. instruction trace)'];
    case 'stat':
      return ['# contains stat data'];
    case 'raw':
      if (f.id === Feature.BPF_PROG_INFO) {
        const btf = ctx.all.find((x) => x.kind === 'raw' && x.id === Feature.BPF_BTF);
        return printBpfProgInfo(f.bytes, ctx.le ?? true, btfById(btf && btf.kind === 'raw' ? btf.bytes : undefined));
      }
      if (f.id === Feature.BPF_BTF) return printBpfBtf(f.bytes, ctx.le ?? true);
      return [];
    case 'build_id':
      // perf has no print for build_id (nor tracing_data)
      return [];
  }
}

function printCpuTopology(f: FeatureData & { kind: 'cpu_topology' }, ctx: PrintContext): string[] {
  const out = f.cores.map((s) => `# sibling sockets : ${s}`);
  const dies = f.dies ?? [];
  for (const s of dies) out.push(`# sibling dies    : ${s}`);
  for (const s of f.threads) out.push(`# sibling threads : ${s}`);
  const nr = ctx.all.find((x) => x.kind === 'nrcpus');
  const cpuNr = nr && nr.kind === 'nrcpus' ? nr.avail : 0;
  if (dies.length) {
    if (f.cpus)
      for (let i = 0; i < cpuNr; i++)
        out.push(
          `# CPU ${i}: Core ID ${f.cpus[i]!.coreId | 0}, Die ID ${(f.dieIds?.[i] ?? 0) | 0}, ` +
            `Socket ID ${f.cpus[i]!.socketId | 0}`,
        );
    else out.push('# Core ID, Die ID and Socket ID information is not available');
  } else if (f.cpus) {
    for (let i = 0; i < cpuNr; i++)
      out.push(`# CPU ${i}: Core ID ${f.cpus[i]!.coreId | 0}, Socket ID ${f.cpus[i]!.socketId | 0}`);
  } else out.push('# Core ID and Socket ID information is not available');
  return out;
}

function printGroups(f: FeatureData & { kind: 'group_desc' }, ctx: PrintContext): string[] {
  const ed = ctx.all.find((x) => x.kind === 'event_desc');
  const names = ed && ed.kind === 'event_desc' ? ed.events.map((e) => e.name) : [];
  const out: string[] = [];
  for (const g of f.groups) {
    if (g.nrMembers <= 1) continue;
    const members = names.slice(g.leaderIdx, g.leaderIdx + g.nrMembers);
    const label = g.name === '{anon_group}' ? '' : g.name;
    out.push(`# group: ${label}{${members.join(',')}}`);
  }
  return out;
}

function pmuCapsLine(pmu: string, caps: { name: string; value: string }[]): string {
  if (caps.length === 0) return `# ${pmu} pmu capabilities: not available`;
  return `# ${pmu} pmu capabilities: ${caps.map((c) => `${c.name}=${c.value}`).join(', ')}`;
}

const CLOCK_NAMES = new Map([
  [1, 'monotonic'],
  [4, 'monotonic_raw'],
  [0, 'realtime'],
  [7, 'boottime'],
  [11, 'tai'],
]);

function printClockData(f: FeatureData & { kind: 'clock_data' }): string[] {
  const name = CLOCK_NAMES.get(f.clockid) ?? '(not_found)';
  const todSec = f.todNs / 1_000_000_000n;
  const todUsec = (f.todNs % 1_000_000_000n) / 1000n;
  const d = new Date(Number(todSec) * 1000);
  const p2 = (n: number) => String(n).padStart(2, '0');
  const date =
    `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ` +
    `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
  const us = String(todUsec).padStart(6, '0');
  return [
    `# clockid: ${name} (${f.clockid})`,
    `# reference time: ${date}.${us} = ${formatPerfTime(f.todNs)} (TOD) = ${formatNsTime(f.clockidNs)} (${name})`,
  ];
}

/** unit_number__scnprintf: divide by 1024 while the quotient is > 1, up to G. */
function unitNumber(n: bigint): string {
  const units = 'BKMG';
  let i = 0;
  while (n / 1024n > 1n && i < 3) {
    n /= 1024n;
    i++;
  }
  return `${n}${units[i]}`;
}

function bitsOf(words: bigint[], nbits: bigint): number[] {
  const out: number[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === 0n) continue;
    for (let b = 0; b < 64; b++) if ((w >> BigInt(b)) & 1n && BigInt(i * 64 + b) < nbits) out.push(i * 64 + b);
  }
  return out;
}

/** bitmap_scnprintf / cpu_map__snprint: "0-23,32-199". */
export function rangeList(sorted: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Parse a cpu list ("0-3,5") as perf_cpu_map__new does and print it back in ranges. */
export function cpuListString(s: string): string {
  const cpus = new Set<number>();
  for (const part of s.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] !== undefined ? Number(m[2]) : a;
    for (let c = a; c <= b && c - a < 65536; c++) cpus.add(c);
  }
  return rangeList([...cpus].sort((x, y) => x - y));
}

const SAMPLE_BITS = [
  'IP',
  'TID',
  'TIME',
  'ADDR',
  'READ',
  'CALLCHAIN',
  'ID',
  'CPU',
  'PERIOD',
  'STREAM_ID',
  'RAW',
  'BRANCH_STACK',
  'REGS_USER',
  'STACK_USER',
  'WEIGHT',
  'DATA_SRC',
  'IDENTIFIER',
  'TRANSACTION',
  'REGS_INTR',
  'PHYS_ADDR',
  'AUX',
  'CGROUP',
  'DATA_PAGE_SIZE',
  'CODE_PAGE_SIZE',
  'WEIGHT_STRUCT',
];
// perf prints the names in this order (perf_event_attr_fprintf.c), not bit order
const SAMPLE_ORDER = [
  'IP',
  'TID',
  'TIME',
  'ADDR',
  'READ',
  'CALLCHAIN',
  'ID',
  'CPU',
  'PERIOD',
  'STREAM_ID',
  'RAW',
  'BRANCH_STACK',
  'REGS_USER',
  'STACK_USER',
  'IDENTIFIER',
  'REGS_INTR',
  'DATA_SRC',
  'WEIGHT',
  'PHYS_ADDR',
  'AUX',
  'CGROUP',
  'DATA_PAGE_SIZE',
  'CODE_PAGE_SIZE',
  'WEIGHT_STRUCT',
];
const READ_BITS = ['TOTAL_TIME_ENABLED', 'TOTAL_TIME_RUNNING', 'ID', 'GROUP', 'LOST'];
const BRANCH_BITS = [
  'USER',
  'KERNEL',
  'HV',
  'ANY',
  'ANY_CALL',
  'ANY_RETURN',
  'IND_CALL',
  'ABORT_TX',
  'IN_TX',
  'NO_TX',
  'COND',
  'CALL_STACK',
  'IND_JUMP',
  'CALL',
  'NO_FLAGS',
  'NO_CYCLES',
  'TYPE_SAVE',
  'HW_INDEX',
  'PRIV_SAVE',
];

function bitNames(v: bigint, names: string[], order = names): string {
  return order.filter((n) => (v >> BigInt(names.indexOf(n))) & 1n).join('|');
}

/** perf_event_attr__fprintf: the non-zero fields, in perf's order and format. */
export function attrFields(a: EventAttr): [string, string][] {
  const out: [string, string][] = [];
  const hex = (v: bigint) => `0x${v.toString(16)}`;
  const add = (k: string, v: bigint | number, fmt: (x: bigint) => string = String) => {
    if (BigInt(v) !== 0n) out.push([k, fmt(BigInt(v))]);
  };
  add('type', a.type);
  add('size', a.size);
  add('config', a.config, hex);
  add('{ sample_period, sample_freq }', a.samplePeriod);
  add('sample_type', a.sampleType, (v) => bitNames(v, SAMPLE_BITS, SAMPLE_ORDER));
  add('read_format', a.readFormat, (v) => bitNames(v, READ_BITS));
  for (const [name, bit] of Object.entries(AttrFlag)) {
    if (name === 'mmap_data') add('precise_ip', attrPreciseIp(a));
    add(name, (a.flags >> BigInt(bit)) & 1n);
  }
  add('{ wakeup_events, wakeup_watermark }', a.wakeupEvents);
  add('bp_type', a.bpType);
  add('{ bp_addr, config1 }', a.config1, hex);
  add('{ bp_len, config2 }', a.config2, hex);
  add('branch_sample_type', a.branchSampleType, (v) => bitNames(v, BRANCH_BITS));
  add('sample_regs_user', a.sampleRegsUser, hex);
  add('sample_stack_user', a.sampleStackUser);
  add('clockid', a.clockid);
  add('sample_regs_intr', a.sampleRegsIntr, hex);
  add('aux_watermark', a.auxWatermark);
  add('sample_max_stack', a.sampleMaxStack);
  add('aux_sample_size', a.auxSampleSize);
  add('sig_data', a.sigData);
  return out;
}
