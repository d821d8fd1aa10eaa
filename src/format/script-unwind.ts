/**
 * The user frames of `perf record --call-graph dwarf` samples for `perf
 * script` (machine.c thread__resolve_callchain_unwind): when the event
 * samples both PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER and the
 * sample holds registers and a non-empty stack copy, the frames unwound
 * from them (src/machine/dwarf-unwind.ts) follow the callchain's own
 * entries (the kernel part), each limited to --max-stack on its own.
 */
import { SampleType } from '../abi/sample-format.js';
import type { EventAttr } from '../abi/event-attr.js';
import type { SampleRecord } from '../perfdata/index.js';
import type { UserMaps } from '../session/user-maps.js';
import { unwindUser } from '../machine/dwarf-unwind.js';
import type { DsoUnwindTables } from '../machine/unwind-elf.js';
import { Addr2Line } from '../machine/addr2line.js';
import type { ScriptSymbols } from './script-symbols.js';

const BOTH = SampleType.REGS_USER | SampleType.STACK_USER;

/** Whether perf post-unwinds this event's samples. */
export function dwarfUnwinds(attr: EventAttr | undefined): boolean {
  return attr !== undefined && (attr.sampleType & BOTH) === BOTH;
}

/** The unwound user frames of one sample (callee first), [] when perf unwinds none. */
export function dwarfUserFrames(
  rec: SampleRecord,
  attr: EventAttr,
  pid: number,
  maps: UserMaps,
  tables: DsoUnwindTables,
  maxStack: number,
): { ip: bigint; user: boolean }[] {
  const regs = rec.regsUser;
  const stack = rec.stackUser;
  if (!regs || regs.abi === 0n || !stack || !stack.dynSize) return [];
  const size = Number(stack.dynSize < BigInt(stack.data.length) ? stack.dynSize : BigInt(stack.data.length));
  const ips = unwindUser(
    { mask: attr.sampleRegsUser, regs: regs.regs, stack: stack.data.subarray(0, size) },
    (ip) => {
      const hit = maps.lookup(pid, ip);
      if (!hit) return undefined;
      if (hit.identity) return { start: hit.start, mapIp: hit.mapIp, tables: undefined };
      const loadBase = maps.loadBase(pid, hit.filename);
      return { start: hit.start, mapIp: hit.mapIp, loadBase, tables: tables.get(hit.filename) };
    },
    maxStack,
  );
  return ips.map((ip) => ({ ip, user: true }));
}

/** A callchain line: an address, its space, and the inlined function perf prints there (if any). */
export interface ChainEntry {
  ip: bigint;
  user: boolean;
  inlined?: string;
}

/** perf's MAX_INLINE_NEST. */
const MAX_INLINE_NEST = 1024;

/**
 * machine.c append_inlines for unwound frames: addr2line's records for the
 * frame's address in the dso's symbol file (its symsrc_filename, else its
 * name); each record is a line, named as the symbol there when addr2line's
 * function is that symbol, else "(inlined)" under addr2line's name. No
 * records (no debug information, no symbol): the frame as it is.
 */
export function expandInlines(entries: ChainEntry[], pid: number, syms: ScriptSymbols, a2l: Addr2Line): ChainEntry[] {
  const out: ChainEntry[] = [];
  for (const e of entries) {
    const s = e.user ? syms.userSymbol(pid, e.ip) : undefined;
    const file = s ? syms.dsos.symsrcFile(s.filename) : undefined;
    const bias = s ? (syms.dsos.unwindTables().get(s.filename)?.objdumpBias ?? 0n) : 0n;
    const recs = s && file && !file.startsWith('[') ? a2l.lookup(file, s.mapIp + bias) : undefined;
    if (!s || !recs || recs.length === 0) {
      out.push(e);
      continue;
    }
    for (const r of recs.slice(0, MAX_INLINE_NEST + 1))
      out.push(r.fn === s.name ? { ip: e.ip, user: true } : { ip: e.ip, user: true, inlined: r.fn });
  }
  return out;
}

/**
 * The DWARF unwinding state of `perf script` over a recording: perf unwinds a
 * process's samples only once its maps hold a file whose ELF type perf can
 * read (unwind__prepare_access, on each map inserted or cloned at fork:
 * dso__type of an unknown or unreadable file registers no unwinder, so a
 * process mapping only missing files prints no user frames).
 */
export class ScriptUnwinder {
  private readonly ready = new Set<number>();
  private a2l: Addr2Line | undefined;

  constructor(
    private readonly maps: UserMaps,
    private readonly syms: () => ScriptSymbols,
  ) {}

  onMmap(pid: number, filename: string): void {
    if (!this.ready.has(pid) && this.syms().dsos.unwindTables().get(filename)) this.ready.add(pid);
  }

  onFork(pid: number, ppid: number): void {
    if (pid !== ppid && this.ready.has(ppid)) this.ready.add(pid);
  }

  /** The unwound user frames of a sample (inlined functions expanded), [] when perf unwinds none. */
  frames(rec: SampleRecord, attr: EventAttr, pid: number, maxStack: number): ChainEntry[] {
    if (!dwarfUnwinds(attr) || !this.ready.has(pid)) return [];
    const syms = this.syms();
    const user = dwarfUserFrames(rec, attr, pid, this.maps, syms.dsos.unwindTables(), maxStack);
    if (user.length === 0) return user;
    this.a2l ??= new Addr2Line();
    return expandInlines(user, pid, syms, this.a2l);
  }
}
