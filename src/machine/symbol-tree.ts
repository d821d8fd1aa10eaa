/**
 * perf 6.1's symbol tree for a user dso, replayed: where symbols overlap (a
 * zero-size `_init` that symbols__fixup_end extends over `.plt`, the `@plt`
 * symbols synthesized inside it, a label inside a sized function), which one
 * a lookup returns is the first its tree search meets from the root, so it
 * depends on the tree's shape. The shape follows from the operations, in
 * perf's order: the ELF symbols inserted in symbol-table order
 * (__symbols__insert: a start below the node's goes left, an equal or
 * greater one right), symbols__fixup_duplicate's erasures, then the PLT
 * symbols inserted in `.rela.plt` order; lookups are symbols__find. The
 * red-black rebalancing is Linux's lib/rbtree.c (__rb_insert, __rb_erase,
 * ____rb_erase_color), case for case, since a different but valid
 * rebalancing gives another shape and other answers.
 *
 * Nodes are numbers (ids given in insertion order); -1 is no node.
 */
import type { InsertOrder } from './elf-symbols.js';
import { type KernelSymbol, lastStartingBy, SymbolTable } from './symbols.js';

export class SymbolTree {
  private left: Int32Array;
  private right: Int32Array;
  private parent: Int32Array;
  private red: Uint8Array;
  /** Each node's start and end (set later, setEnd) as u32 halves; an end can be 2^64 (a Float64Array high half). */
  private sHi: Uint32Array;
  private sLo: Uint32Array;
  private eHi: Float64Array;
  private eLo: Uint32Array;
  private count = 0;
  private root = -1;

  constructor(capacity = 16) {
    const n = Math.max(1, capacity);
    this.left = new Int32Array(n);
    this.right = new Int32Array(n);
    this.parent = new Int32Array(n);
    this.red = new Uint8Array(n);
    this.sHi = new Uint32Array(n);
    this.sLo = new Uint32Array(n);
    this.eHi = new Float64Array(n);
    this.eLo = new Uint32Array(n);
  }

  get size(): number {
    return this.count;
  }

  /** Insert a node keyed by `start` (perf's __symbols__insert); its id. */
  insert(start: bigint): number {
    const id = this.count++;
    if (id === this.left.length) this.grow(id * 2);
    const h = Number(start >> 32n);
    const l = Number(start & 0xffffffffn);
    this.sHi[id] = h;
    this.sLo[id] = l;
    const L = this.left;
    const R = this.right;
    let p = -1;
    let toLeft = false;
    for (let n = this.root; n >= 0; ) {
      p = n;
      const nh = this.sHi[n]!;
      toLeft = h < nh || (h === nh && l < this.sLo[n]!);
      n = toLeft ? L[n]! : R[n]!;
    }
    L[id] = -1;
    R[id] = -1;
    this.parent[id] = p;
    this.red[id] = 1;
    if (p < 0) this.root = id;
    else if (toLeft) L[p] = id;
    else R[p] = id;
    this.insertColor(id);
    return id;
  }

  setEnd(id: number, end: bigint): void {
    this.eHi[id] = Number(end >> 32n);
    this.eLo[id] = Number(end & 0xffffffffn);
  }

  start(id: number): bigint {
    return (BigInt(this.sHi[id]!) << 32n) | BigInt(this.sLo[id]!);
  }

  end(id: number): bigint {
    return (BigInt(this.eHi[id]!) << 32n) + BigInt(this.eLo[id]!);
  }

  /**
   * symbols__find: from the root, left when `ip` is below the node's start,
   * right when past its end (or at the end of a sized symbol), else the node.
   */
  find(ip: bigint): number {
    const h = Number(ip >> 32n);
    const l = Number(ip & 0xffffffffn);
    let n = this.root;
    while (n >= 0) {
      const sh = this.sHi[n]!;
      const sl = this.sLo[n]!;
      const eh = this.eHi[n]!;
      const el = this.eLo[n]!;
      const atEnd = h === eh && l === el;
      if (h < sh || (h === sh && l < sl)) n = this.left[n]!;
      else if (h > eh || (h === eh && l > el) || (atEnd && !(h === sh && l === sl))) n = this.right[n]!;
      else return n;
    }
    return -1;
  }

  private grow(n: number): void {
    const g = <A extends Int32Array | Uint32Array | Uint8Array | Float64Array>(a: A): A => {
      const b = new (a.constructor as new (n: number) => A)(n);
      b.set(a as never);
      return b;
    };
    this.left = g(this.left);
    this.right = g(this.right);
    this.parent = g(this.parent);
    this.red = g(this.red);
    this.sHi = g(this.sHi);
    this.sLo = g(this.sLo);
    this.eHi = g(this.eHi);
    this.eLo = g(this.eLo);
  }

  /** __rb_change_child: parent's link to old (or the root) now points to new. */
  private changeChild(old: number, nu: number, parent: number): void {
    if (parent < 0) this.root = nu;
    else if (this.left[parent] === old) this.left[parent] = nu;
    else this.right[parent] = nu;
  }

  /** __rb_rotate_set_parents: nu takes old's parent and colour; old hangs under nu with `red`. */
  private rotateSetParents(old: number, nu: number, red: number): void {
    const parent = this.parent[old]!;
    this.parent[nu] = parent;
    this.red[nu] = this.red[old]!;
    this.parent[old] = nu;
    this.red[old] = red;
    this.changeChild(old, nu, parent);
  }

  /** Set tmp's parent to p and colour it black (rb_set_parent_color(tmp, p, RB_BLACK)), when tmp is a node. */
  private blackUnder(tmp: number, p: number): void {
    if (tmp < 0) return;
    this.parent[tmp] = p;
    this.red[tmp] = 0;
  }

  /**
   * __rb_insert. lib/rbtree.c writes each case twice, once per side; here
   * `A` is the side the parent hangs on from the grandparent and `B` the
   * other (left and right, or right and left), the same steps on both.
   */
  private insertColor(n: number): void {
    let node = n;
    let parent = this.parent[node]!;
    for (;;) {
      if (parent < 0) {
        this.red[node] = 0;
        return;
      }
      if (!this.red[parent]) return;
      const g = this.parent[parent]!;
      const parentLeft = parent !== this.right[g];
      const A = parentLeft ? this.left : this.right;
      const B = parentLeft ? this.right : this.left;
      let tmp = B[g]!;
      if (tmp >= 0 && this.red[tmp]) {
        // case 1: the uncle is red (colour flips)
        this.red[tmp] = 0;
        this.red[parent] = 0;
        node = g;
        parent = this.parent[node]!;
        this.red[node] = 1;
        continue;
      }
      tmp = B[parent]!;
      if (node === tmp) {
        // case 2: rotate at parent (left when the parent is a left child)
        tmp = A[node]!;
        B[parent] = tmp;
        A[node] = parent;
        this.blackUnder(tmp, parent);
        this.parent[parent] = node;
        this.red[parent] = 1;
        parent = node;
        tmp = B[node]!;
      }
      // case 3: rotate the other way at the grandparent
      A[g] = tmp;
      B[parent] = g;
      this.blackUnder(tmp, g);
      this.rotateSetParents(g, parent, 1);
      return;
    }
  }

  /** rb_erase: __rb_erase_augmented, then ____rb_erase_color where a black node left. */
  erase(node: number): void {
    const L = this.left;
    const R = this.right;
    const P = this.parent;
    const child = R[node]!;
    let tmp = L[node]!;
    let rebalance = -1;
    if (tmp < 0) {
      // case 1: at most one child, the right one
      const parent = P[node]!;
      this.changeChild(node, child, parent);
      if (child >= 0) {
        P[child] = parent;
        this.red[child] = this.red[node]!;
      } else if (!this.red[node]) rebalance = parent;
    } else if (child < 0) {
      // case 1 again, the child is the left one
      const parent = P[node]!;
      P[tmp] = parent;
      this.red[tmp] = this.red[node]!;
      this.changeChild(node, tmp, parent);
    } else {
      let successor = child;
      let parent: number;
      let child2: number;
      tmp = L[child]!;
      if (tmp < 0) {
        // case 2: the successor is the right child
        parent = successor;
        child2 = R[successor]!;
      } else {
        // case 3: the successor is the leftmost node under the right child
        do {
          parent = successor;
          successor = tmp;
          tmp = L[tmp]!;
        } while (tmp >= 0);
        child2 = R[successor]!;
        L[parent] = child2;
        R[successor] = child;
        P[child] = successor;
      }
      tmp = L[node]!;
      L[successor] = tmp;
      P[tmp] = successor;
      const up = P[node]!;
      this.changeChild(node, successor, up);
      if (child2 >= 0) {
        P[child2] = parent;
        this.red[child2] = 0;
      } else if (!this.red[successor]) rebalance = parent;
      P[successor] = up;
      this.red[successor] = this.red[node]!;
    }
    if (rebalance >= 0) this.eraseColor(rebalance);
  }

  /**
   * ____rb_erase_color: one black too few on the paths through `parent`'s
   * child `node` (-1 at first). As in insertColor, `A` is node's side of
   * the parent and `B` the sibling's: lib/rbtree.c's two copies in one.
   */
  private eraseColor(p: number): void {
    let parent = p;
    let node = -1;
    for (;;) {
      const nodeLeft = node !== this.right[parent];
      const A = nodeLeft ? this.left : this.right;
      const B = nodeLeft ? this.right : this.left;
      let sibling = B[parent]!;
      let tmp1: number;
      let tmp2: number;
      if (this.red[sibling]) {
        // case 1: rotate at parent towards node's side
        tmp1 = A[sibling]!;
        B[parent] = tmp1;
        A[sibling] = parent;
        this.blackUnder(tmp1, parent);
        this.rotateSetParents(parent, sibling, 1);
        sibling = tmp1;
      }
      tmp1 = B[sibling]!;
      if (tmp1 < 0 || !this.red[tmp1]) {
        tmp2 = A[sibling]!;
        if (tmp2 < 0 || !this.red[tmp2]) {
          // case 2: sibling colour flip
          this.red[sibling] = 1;
          if (this.red[parent]) this.red[parent] = 0;
          else {
            node = parent;
            parent = this.parent[node]!;
            if (parent >= 0) continue;
          }
          return;
        }
        // case 3: rotate at sibling, away from node's side
        tmp1 = B[tmp2]!;
        A[sibling] = tmp1;
        B[tmp2] = sibling;
        B[parent] = tmp2;
        this.blackUnder(tmp1, sibling);
        tmp1 = sibling;
        sibling = tmp2;
      }
      // case 4: rotate at parent towards node's side, colour flips
      tmp2 = A[sibling]!;
      B[parent] = tmp2;
      A[sibling] = parent;
      this.blackUnder(tmp1, sibling);
      if (tmp2 >= 0) this.parent[tmp2] = parent;
      this.rotateSetParents(parent, sibling, 0);
      return;
    }
  }

  /** The nodes in order (tests): id, colour and depth of each, by an in-order walk. */
  inOrder(): { id: number; red: boolean; depth: number }[] {
    const out: { id: number; red: boolean; depth: number }[] = [];
    const walk = (n: number, d: number): void => {
      if (n < 0) return;
      walk(this.left[n]!, d + 1);
      out.push({ id: n, red: this.red[n] === 1, depth: d });
      walk(this.right[n]!, d + 1);
    };
    walk(this.root, 0);
    return out;
  }
}

/**
 * A dso's symbols looked up as perf looks them up, through the tree
 * perf builds (SymbolTree): the file's symbols inserted in `order`, the
 * duplicates erased, then the PLT symbols. For files whose symbols overlap;
 * undefined when `syms` (sorted, one per start) lacks a symbol the order
 * keeps. Like SymbolTable.columns, it keeps no object per symbol until one
 * is looked up.
 */
export function treeSymbolTable(
  syms: KernelSymbol[],
  order: InsertOrder,
  plt: KernelSymbol[],
): SymbolTable | undefined {
  const n = order.starts.length;
  const tree = new SymbolTree(n + plt.length);
  for (const s of order.starts) tree.insert(s);
  const erased = new Uint8Array(n);
  for (const d of order.dropped) {
    tree.erase(d);
    erased[d] = 1;
  }
  const names: string[] = new Array(n + plt.length);
  const bySym = new Int32Array(syms.length).fill(-1);
  for (let k = 0; k < n; k++) {
    if (erased[k]) continue;
    const i = atStart(syms, order.starts[k]!);
    if (i < 0 || bySym[i]! >= 0) return undefined;
    bySym[i] = k;
    tree.setEnd(k, syms[i]!.end);
    names[k] = syms[i]!.name;
  }
  if (bySym.includes(-1)) return undefined;
  const pltIds = plt.map((p) => {
    const id = tree.insert(p.start);
    tree.setEnd(id, p.end);
    names[id] = p.name;
    return id;
  });
  // every symbol by start, for symbolAt: the file's (sorted) merged with the PLT's (in address order;
  // sorted here in case), the file's first at an equal start
  const order2 = plt
    .map((_, j) => j)
    .sort((a, b) => (plt[a]!.start < plt[b]!.start ? -1 : plt[a]!.start > plt[b]!.start ? 1 : a - b));
  const byStart = new Int32Array(syms.length + plt.length);
  let i = 0;
  let j = 0;
  for (let k = 0; k < byStart.length; k++) {
    const takeSym = j >= order2.length || (i < syms.length && syms[i]!.start <= plt[order2[j]!]!.start);
    byStart[k] = takeSym ? bySym[i++]! : pltIds[order2[j++]!]!;
  }
  return new TreeSymbolTable(tree, names, byStart);
}

/** The index of the symbol of `syms` (sorted by start, one per start) that starts at `start`, or -1. */
function atStart(syms: KernelSymbol[], start: bigint): number {
  const i = lastStartingBy(syms, start);
  return syms[i]?.start === start ? i : -1;
}

class TreeSymbolTable extends SymbolTable {
  /** Symbols made so far, by node: the same object for each lookup. */
  private readonly made = new Map<number, KernelSymbol>();

  constructor(
    private readonly tree: SymbolTree,
    private readonly names: string[],
    /** The nodes by start, for symbolAt (first, last, findName). */
    private readonly byStart: Int32Array,
  ) {
    super();
  }

  get length(): number {
    return this.byStart.length;
  }

  private symbolOf(id: number): KernelSymbol {
    let s = this.made.get(id);
    if (s === undefined) {
      s = { start: this.tree.start(id), end: this.tree.end(id), name: this.names[id]! };
      this.made.set(id, s);
    }
    return s;
  }

  symbolAt(i: number): KernelSymbol {
    return this.symbolOf(this.byStart[i]!);
  }

  find(addr: bigint): KernelSymbol | undefined {
    const id = this.tree.find(addr);
    return id >= 0 ? this.symbolOf(id) : undefined;
  }
}
