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

  constructor(private readonly size: number) {}

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
    let s = '';
    for (let n = 0; n < r.nr; n++) {
      const i = (r.pos + n) % this.size;
      const from = r.from[i] ?? 0n;
      const to = r.to[i] ?? 0n;
      if (sym) s += `${symOff(from, symbol, dso)}/${symOff(to, symbol, dso)}`;
      else s += ` 0x${from.toString(16)}${dsoText(from, symbol, dso)}/0x${to.toString(16)}${dsoText(to, symbol, dso)}`;
      // print_bstack_flags: mispred, in_tx, abort, cycles and the branch type name (none: empty)
      s += '/-/-/-/0/ ';
    }
    return s;
  }
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
