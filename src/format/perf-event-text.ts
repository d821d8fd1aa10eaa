/**
 * The text perf prints for a non-sample record after its "PERF_RECORD_<NAME>"
 * (tools/perf/util/event.c perf_event__fprintf and its perf_event__fprintf_*
 * helpers, perf 6.1). `perf script --show-*-events` and `perf script -D` print
 * exactly this, so the strings here are byte-for-byte perf's.
 *
 * For TEXT_POKE perf adds "sym+0xoff" after the address when it can load
 * kernel symbols; the caller passes that text (src/machine knows it).
 */
import {
  PERF_AUX_FLAG_OVERWRITE,
  PERF_AUX_FLAG_PARTIAL,
  PERF_AUX_FLAG_TRUNCATED,
  PERF_RECORD_MISC_COMM_EXEC,
  PERF_RECORD_MISC_MMAP_BUILD_ID,
  PERF_RECORD_MISC_MMAP_DATA,
  PERF_RECORD_MISC_SWITCH_OUT,
  PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
  RecordType,
} from '../abi/record-type.js';
import { hex2, hexString } from '../io/hex.js';

/** perf_event__name(): perf's short names, which differ from the uapi spelling for user records. */
const PERF_EVENT_NAMES: Record<number, string> = {
  0: 'TOTAL',
  [RecordType.MMAP]: 'MMAP',
  [RecordType.MMAP2]: 'MMAP2',
  [RecordType.LOST]: 'LOST',
  [RecordType.COMM]: 'COMM',
  [RecordType.EXIT]: 'EXIT',
  [RecordType.THROTTLE]: 'THROTTLE',
  [RecordType.UNTHROTTLE]: 'UNTHROTTLE',
  [RecordType.FORK]: 'FORK',
  [RecordType.READ]: 'READ',
  [RecordType.SAMPLE]: 'SAMPLE',
  [RecordType.AUX]: 'AUX',
  [RecordType.ITRACE_START]: 'ITRACE_START',
  [RecordType.LOST_SAMPLES]: 'LOST_SAMPLES',
  [RecordType.SWITCH]: 'SWITCH',
  [RecordType.SWITCH_CPU_WIDE]: 'SWITCH_CPU_WIDE',
  [RecordType.NAMESPACES]: 'NAMESPACES',
  [RecordType.KSYMBOL]: 'KSYMBOL',
  [RecordType.BPF_EVENT]: 'BPF_EVENT',
  [RecordType.CGROUP]: 'CGROUP',
  [RecordType.TEXT_POKE]: 'TEXT_POKE',
  [RecordType.AUX_OUTPUT_HW_ID]: 'AUX_OUTPUT_HW_ID',
  [RecordType.HEADER_ATTR]: 'ATTR',
  [RecordType.HEADER_EVENT_TYPE]: 'EVENT_TYPE',
  [RecordType.HEADER_TRACING_DATA]: 'TRACING_DATA',
  [RecordType.HEADER_BUILD_ID]: 'BUILD_ID',
  [RecordType.FINISHED_ROUND]: 'FINISHED_ROUND',
  [RecordType.ID_INDEX]: 'ID_INDEX',
  [RecordType.AUXTRACE_INFO]: 'AUXTRACE_INFO',
  [RecordType.AUXTRACE]: 'AUXTRACE',
  [RecordType.AUXTRACE_ERROR]: 'AUXTRACE_ERROR',
  [RecordType.THREAD_MAP]: 'THREAD_MAP',
  [RecordType.CPU_MAP]: 'CPU_MAP',
  [RecordType.STAT_CONFIG]: 'STAT_CONFIG',
  [RecordType.STAT]: 'STAT',
  [RecordType.STAT_ROUND]: 'STAT_ROUND',
  [RecordType.EVENT_UPDATE]: 'EVENT_UPDATE',
  [RecordType.TIME_CONV]: 'TIME_CONV',
  [RecordType.HEADER_FEATURE]: 'FEATURE',
  [RecordType.COMPRESSED]: 'COMPRESSED',
  // perf 6.16+ (perf 6.1 ends its table at 83)
  [RecordType.COMPRESSED2]: 'COMPRESSED2',
  [RecordType.FINISHED_INIT]: 'FINISHED_INIT',
};

/** One past the highest type perf 6.1 knows (PERF_RECORD_HEADER_MAX). */
export const PERF_RECORD_HEADER_MAX = 83;

/** perf_event__name(id): "MMAP2", "ATTR", …, or "UNKNOWN". */
export function perfEventName(id: number): string {
  return PERF_EVENT_NAMES[id] ?? 'UNKNOWN';
}

/** C's "%#lx": 0 prints as "0", anything else as 0x…. */
export function hexAlt(v: bigint | number): string {
  return v === 0n || v === 0 ? '0' : `0x${v.toString(16)}`;
}

const padLeft = (s: string | number, w: number): string => String(s).padStart(w);
const padRight = (s: string | number, w: number): string => String(s).padEnd(w);

/** perf_ns__names, index = NET_NS_INDEX … CGROUP_NS_INDEX. */
const NS_NAMES = ['net', 'uts', 'ipc', 'pid', 'user', 'mnt', 'cgroup'];

/** The decoded fields this module reads; the reader's records have (at least) these. */
export interface PrintableRecord {
  kind: string;
  type: number;
  misc: number;
}

/** binary__fprintf(bytes, len, 16, text_poke_printer): 16 bytes a line, nothing for an empty buffer. */
function pokeBytesLine(label: 'Old' | 'New', b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) {
    if (i % 16 === 0) s += `            ${label} bytes:`;
    s += ` ${hex2(b[i]!)}`;
    if (i % 16 === 15 || i === b.length - 1) s += '\n';
  }
  return s;
}

/**
 * perf_event__fprintf(): "PERF_RECORD_<NAME>" plus the type's detail, ending in
 * "\n" (possibly several lines for TEXT_POKE and NAMESPACES).
 */
export function formatPerfEvent(rec: PrintableRecord, opts: { textPokeSymbol?: string } = {}): string {
  const head = `PERF_RECORD_${perfEventName(rec.type)}`;
  // biome-ignore lint/suspicious/noExplicitAny: fields are read per record type below, as perf_event__fprintf does
  const r = rec as Record<string, any>;
  switch (rec.type) {
    case RecordType.COMM: {
      const exec = rec.misc & PERF_RECORD_MISC_COMM_EXEC ? ' exec' : '';
      return `${head}${exec}: ${r.comm}:${r.pid}/${r.tid}\n`;
    }
    case RecordType.FORK:
    case RecordType.EXIT:
      return `${head}(${r.pid}:${r.tid}):(${r.ppid}:${r.ptid})\n`;
    case RecordType.MMAP:
      return (
        `${head} ${r.pid}/${r.tid}: [${hexAlt(r.addr)}(${hexAlt(r.len)}) @ ${hexAlt(r.pgoff)}]: ` +
        `${rec.misc & PERF_RECORD_MISC_MMAP_DATA ? 'r' : 'x'} ${r.filename}\n`
      );
    case RecordType.MMAP2: {
      const prot = r.prot as number;
      const perms =
        (prot & 1 ? 'r' : '-') +
        (prot & 2 ? 'w' : '-') +
        (prot & 4 ? 'x' : '-') +
        ((r.flags as number) & 1 ? 's' : 'p');
      const where = `${head} ${r.pid}/${r.tid}: [${hexAlt(r.addr)}(${hexAlt(r.len)}) @ ${hexAlt(r.pgoff)}`;
      if (rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        const id = hexString((r.buildId as Uint8Array | undefined) ?? new Uint8Array());
        return `${where} <${id}>]: ${perms} ${r.filename}\n`;
      }
      return (
        `${where} ${hex2(r.maj ?? 0)}:${hex2(r.min ?? 0)} ${r.ino ?? 0n} ${r.inoGeneration ?? 0n}]: ` +
        `${perms} ${r.filename}\n`
      );
    }
    case RecordType.NAMESPACES: {
      const links = r.links as { dev: bigint; ino: bigint }[];
      let s = `${head} ${r.pid}/${r.tid} - nr_namespaces: ${links.length}\n\t\t[`;
      links.forEach((l, i) => {
        if (i && i % 4 === 0) s += '\n\t\t ';
        s += `${i}/${NS_NAMES[i] ?? 'UNKNOWN'}: ${l.dev}/${hexAlt(l.ino)}${i + 1 !== links.length ? ', ' : ']\n'}`;
      });
      return s;
    }
    case RecordType.CGROUP:
      return `${head} cgroup: ${r.id} ${r.path}\n`;
    case RecordType.AUX: {
      const f = BigInt(r.flags as bigint);
      const fl =
        (f & BigInt(PERF_AUX_FLAG_TRUNCATED) ? 'T' : '') +
        (f & BigInt(PERF_AUX_FLAG_OVERWRITE) ? 'O' : '') +
        (f & BigInt(PERF_AUX_FLAG_PARTIAL) ? 'P' : '');
      return `${head} offset: ${hexAlt(r.auxOffset)} size: ${hexAlt(r.auxSize)} flags: ${hexAlt(f)} [${fl}]\n`;
    }
    case RecordType.ITRACE_START:
      return `${head} pid: ${(r.pid as number) >>> 0} tid: ${(r.tid as number) >>> 0}\n`;
    case RecordType.AUX_OUTPUT_HW_ID:
      return `${head} hw_id: ${hexAlt(r.hwId)}\n`;
    case RecordType.SWITCH:
    case RecordType.SWITCH_CPU_WIDE: {
      const out = (rec.misc & PERF_RECORD_MISC_SWITCH_OUT) !== 0;
      const inOut = !out
        ? 'IN         '
        : !(rec.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
          ? 'OUT        '
          : 'OUT preempt';
      if (rec.type === RecordType.SWITCH) return `${head} ${inOut}\n`;
      return (
        `${head} ${inOut}  ${out ? 'next' : 'prev'} pid/tid: ` +
        `${padLeft(r.nextPrevPid, 5)}/${padRight(r.nextPrevTid, 5)}\n`
      );
    }
    case RecordType.LOST:
      return `${head} lost ${r.lost}\n`;
    case RecordType.KSYMBOL:
      return (
        `${head} addr ${(r.addr as bigint).toString(16)} len ${r.len} type ${r.ksymType} flags ` +
        `0x${(r.flags as number).toString(16)} name ${r.name}\n`
      );
    case RecordType.BPF_EVENT:
      return `${head} type ${r.bpfType}, flags ${r.flags}, id ${r.id}\n`;
    case RecordType.TEXT_POKE: {
      const oldB = r.oldBytes as Uint8Array;
      const newB = r.newBytes as Uint8Array;
      return (
        `${head} ${(r.addr as bigint).toString(16)} ${opts.textPokeSymbol ?? ''} ` +
        `old len ${oldB.length} new len ${newB.length}\n` +
        pokeBytesLine('Old', oldB) +
        pokeBytesLine('New', newB)
      );
    }
    default:
      return `${head}\n`;
  }
}
