/**
 * perf's `--itrace=l[N]` last-branch entries on synthesized instruction
 * samples and their text in perf script's `brstack` / `brstacksym` fields.
 * perf 6.1 keeps them on the thread stack (util/thread-stack.c
 * thread_stack__update_br_stack, thread_stack__br_sample): a ring of the
 * last N branches (from, to) per thread (the idle task per CPU), fed by every
 * branch the decoder reports, newest first in a sample, and emptied when the
 * thread's stack is flushed. perf script prints each entry as
 * builtin-script.c perf_sample__fprintf_brstack / _brstacksym and
 * print_bstack_flags do: `from/to/mispred/in_tx/abort/cycles/type ` (the
 * synthesized entries carry no flags: `-/-/-/0/`).
 */

interface Ring {
  /** Branch sources and targets, filled downwards from the end as perf's br_stack_rb. */
  from: bigint[];
  to: bigint[];
  /** Where the newest entry is (perf's br_stack_pos) and how many are valid (its nr). */
  pos: number;
  nr: number;
  /** The CPU whose trace last fed the ring (a thread moving to another CPU starts afresh, see CallIndent). */
  cpu: number;
}

/** What a brstack entry prints of an address: its symbol (name and start) and dso. */
export type BranchSymbol = (addr: bigint) => { name: string | undefined; start: bigint; dso: string };

export class LastBranch {
  private readonly rings = new Map<string, Ring>();

  /**
   * `size`: the ring's (perf's br_stack_sz_plus: the l/L size, plus 1024 with L on a kernel trace for the
   * branches between an event and its sample); `limit`: the entries an itrace sample takes (br_stack_sz).
   */
  constructor(
    private readonly size: number,
    private readonly limit = size,
  ) {}

  /** thread_stack__event with a branch stack: record the branch of the thread `key` on `cpu`. */
  event(key: string, cpu: number, from: bigint, to: bigint): void {
    let r = this.rings.get(key);
    if (!r) {
      r = {
        from: new Array<bigint>(this.size).fill(0n),
        to: new Array<bigint>(this.size).fill(0n),
        pos: 0,
        nr: 0,
        cpu,
      };
      this.rings.set(key, r);
    }
    // perf flushes the thread stack when the trace number changes: its queue's, so on another CPU
    if (r.cpu !== cpu) {
      r.pos = 0;
      r.nr = 0;
      r.cpu = cpu;
    }
    if (!r.pos) r.pos = this.size;
    r.pos--;
    r.from[r.pos] = from;
    r.to[r.pos] = to;
    if (r.nr < this.size) r.nr++;
  }

  /**
   * The brstack (or, with `sym`, brstacksym) text of a sample of thread `key`: nothing when the thread has
   * no branches; `dso` adds each address's dso in parentheses, as perf does when the dso field is shown.
   */
  text(key: string, sym: boolean, dso: boolean, symbol: BranchSymbol): string {
    const r = this.rings.get(key);
    if (!r) return '';
    const idx: number[] = [];
    for (let n = 0; n < Math.min(r.nr, this.limit); n++) idx.push((r.pos + n) % this.size);
    return entriesText(r, idx, sym, dso, symbol);
  }

  /**
   * thread_stack__br_sample_late: the entries of a sample written after its event (`L` on another event's
   * sample at `ip`), newest first, starting at the first branch the event can have followed: for a user
   * ip, the first branch to user space; for a kernel ip, the first with the ip between it and the newer
   * one's source, or a user-space end.
   */
  lateText(key: string, ip: bigint, kernelStart: bigint, sym: boolean, dso: boolean, symbol: BranchSymbol): string {
    const r = this.rings.get(key);
    if (!r?.nr) return '';
    // the ring from the newest entry to its end, then (once full) from its start to the newest
    const order: number[] = [];
    for (let i = r.pos; i < this.size; i++) order.push(i);
    if (r.nr >= this.size) for (let i = 0; i < r.pos; i++) order.push(i);
    const idx: number[] = [];
    let start = false;
    let newer: number | undefined;
    for (const i of order) {
      if (idx.length >= this.limit) break;
      const from = r.from[i]!;
      const to = r.to[i]!;
      if (!start) {
        start =
          ip < kernelStart
            ? to !== 0n && to < kernelStart
            : (newer !== undefined && ip >= to && ip <= r.from[newer]!) ||
              from < kernelStart ||
              (to !== 0n && to < kernelStart);
      }
      if (start) idx.push(i);
      newer = i;
    }
    return entriesText(r, idx, sym, dso, symbol);
  }
}

/** perf_sample__fprintf_brstack(sym) of the ring's entries at `idx`. */
function entriesText(r: Ring, idx: readonly number[], sym: boolean, dso: boolean, symbol: BranchSymbol): string {
  let s = '';
  for (const i of idx) {
    const from = r.from[i] ?? 0n;
    const to = r.to[i] ?? 0n;
    if (sym) s += `${symOff(from, symbol, dso)}/${symOff(to, symbol, dso)}`;
    else s += ` 0x${from.toString(16)}${dsoText(from, symbol, dso)}/0x${to.toString(16)}${dsoText(to, symbol, dso)}`;
    // print_bstack_flags: mispred, in_tx, abort, cycles and the branch type name (none: empty)
    s += '/-/-/-/0/ ';
  }
  return s;
}

function dsoText(addr: bigint, symbol: BranchSymbol, dso: boolean): string {
  return dso ? `(${symbol(addr).dso})` : '';
}

/** symbol__fprintf_symname_offs with offsets: `name+0xoff`, or `[unknown]`; then the dso when shown. */
function symOff(addr: bigint, symbol: BranchSymbol, dso: boolean): string {
  const r = symbol(addr);
  const name = r.name === undefined ? '[unknown]' : `${r.name}+0x${(addr - r.start).toString(16)}`;
  return dso ? `${name}(${r.dso})` : name;
}
