import type { FlagEntry, PrintArg, PrintFmt } from './print-arg.js';
import { argEval } from './print-eval.js';

/**
 * The `print fmt:` line of a tracepoint format file: a C format string and
 * the C expressions of its arguments (REC->field, casts, operators, ternaries,
 * __get_str, __print_flags, __print_symbolic, …), parsed into a tree. The
 * tokens and the values of flag/symbol tables follow libtraceevent
 * (event-parse.c __read_token, process_fields / arg_num_eval); printing the
 * tree is src/format/trace-payload.ts.
 */

export type { FlagEntry, PrintArg, PrintFmt } from './print-arg.js';

type Tok = { t: 'item' | 'dq' | 'sq' | 'op' | 'delim'; s: string };

const TWO_CHAR_OPS = new Set(['&&', '||', '<<', '>>', '==', '!=', '<=', '>=', '->', '++', '--']);

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[A-Za-z0-9_]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[A-Za-z0-9_]/.test(src[j]!)) j++;
      out.push({ t: 'item', s: src.slice(i, j) });
      i = j;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      let j = i;
      // "a" "b" is one string (libtraceevent concatenates adjacent double-quoted strings)
      for (;;) {
        j++;
        let last = '';
        while (j < src.length && !(src[j] === c && last !== '\\')) {
          last = src[j] === '\\' && last === '\\' ? '' : src[j]!;
          s += src[j];
          j++;
        }
        if (j >= src.length) throw new Error('unterminated string in print fmt');
        j++;
        if (c !== '"') break;
        let k = j;
        while (k < src.length && /\s/.test(src[k]!)) k++;
        if (src[k] !== '"') break;
        j = k;
      }
      out.push({ t: c === '"' ? 'dq' : 'sq', s });
      i = j;
      continue;
    }
    if ('(),;{}'.includes(c)) {
      out.push({ t: 'delim', s: c });
      i++;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      out.push({ t: 'op', s: two });
      i += 2;
      continue;
    }
    out.push({ t: 'op', s: c });
    i++;
  }
  return out;
}

/** libtraceevent's get_op_prio: smaller binds tighter; -1 unknown. */
function opPrio(op: string): number {
  const P: Record<string, number> = {
    '~': 4,
    '!': 4,
    '*': 6,
    '/': 6,
    '%': 6,
    '+': 7,
    '-': 7,
    '<<': 8,
    '>>': 8,
    '<': 9,
    '>': 9,
    '<=': 9,
    '>=': 9,
    '==': 10,
    '!=': 10,
    '&': 11,
    '^': 12,
    '|': 13,
    '&&': 14,
    '||': 15,
    '?': 16,
    '++': 3,
    '--': 3,
  };
  return P[op] ?? -1;
}

const BINARY_OPS = new Set(['>>', '<<', '&', '|', '&&', '||', '-', '+', '*', '^', '/', '%', '<', '>', '<=', '>=']);
BINARY_OPS.add('==').add('!=');

/** A node being built: libtraceevent fills its print args in place (struct copies and swaps). */
type Node = PrintArg | { k: 'new' } | { k: 'op'; op: string; left?: Node; right?: Node; prio: number };

const fresh = (): Node => ({ k: 'new' }) as Node;
/** A finished node: every 'new' in it has been filled. */
const asArg = (n: Node | undefined): PrintArg => n as unknown as PrintArg;

function become(target: Node, src: Node): void {
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, src);
}

const isItem = (t: Tok | undefined): boolean => t !== undefined && (t.t === 'item' || t.t === 'dq' || t.t === 'sq');
const isOp = (t: Tok | undefined): t is Tok => t !== undefined && t.t === 'op';

/**
 * A port of libtraceevent's recursive parser (process_arg / process_op /
 * process_paren / process_cond): the tree it builds is what perf evaluates,
 * quirks included (equal priorities nest to the right, and a parenthesized
 * operation on the right of a tighter operator is rotated as if the
 * parentheses were not there: `a & (b | c)` is `(a & b) | c`).
 */
class Parser {
  private i = 0;
  constructor(
    private readonly toks: Tok[],
    private readonly hasField: (name: string) => boolean,
  ) {}

  next(): Tok | undefined {
    return this.toks[this.i++];
  }
  private want(t: Tok | undefined, s: string): void {
    if (!t || t.s !== s) throw new Error(`print fmt: expected '${s}', found '${t?.s ?? 'the end'}'`);
  }

  /** process_arg: one operand; returns the token after it. */
  arg(node: Node): Tok | undefined {
    return this.argToken(node, this.next());
  }

  private argToken(node: Node, t: Tok | undefined): Tok | undefined {
    if (!t) throw new Error('print fmt ends inside an expression');
    if (t.t === 'item') {
      if (t.s === 'REC') {
        this.want(this.next(), '->');
        const name = this.next();
        if (name?.t !== 'item') throw new Error('print fmt: REC-> without a field name');
        if (!this.hasField(name.s)) throw new Error(`print fmt: no field '${name.s}'`);
        become(node, { k: 'field', name: name.s });
        return this.next();
      }
      let atom = t.s;
      let n = this.next();
      if (n && n.t === 'delim' && n.s === '(') return this.call(node, atom);
      // atoms can be several tokens long ("unsigned long")
      while (n && n.t === 'item') {
        atom += ` ${n.s}`;
        n = this.next();
      }
      become(node, { k: 'atom', text: atom });
      return n;
    }
    if (t.t === 'dq' || t.t === 'sq') {
      become(node, { k: 'atom', text: t.s, quoted: true });
      return this.next();
    }
    if (t.t === 'delim' && t.s === '(') return this.paren(node);
    // a single op ("-x", "!x", "~x"); any other delimiter here is an error there too
    become(node, { k: 'op', op: t.s, prio: 0 });
    return this.op(node, t);
  }

  private paren(node: Node): Tok | undefined {
    let n = this.arg(node);
    if (isOp(n)) n = this.op(node, n);
    this.want(n, ')');
    n = this.next();
    if (isItem(n) || (n && n.t === 'delim' && n.s === '(')) {
      if (node.k !== 'atom') throw new Error('print fmt: a cast needs a type name');
      const item = fresh();
      const type = node.text;
      n = this.argToken(item, n);
      become(node, { k: 'cast', type, item: asArg(item) });
    }
    return n;
  }

  /** process_op: `t` is the operator token; returns the token after the expression. */
  op(node: Node, t: Tok): Tok | undefined {
    let right: Node | undefined;
    let n: Tok | undefined;
    const cur = node as { k: string; op?: string; left?: Node; prio?: number };
    if (cur.k === 'op' && cur.left === undefined) {
      if (!['~', '!', '+', '-'].includes(t.s)) throw new Error(`print fmt: bad op token ${t.s}`);
      cur.left = { k: 'null' };
      right = fresh();
      (cur as { right?: Node }).right = right;
      n = this.arg(right);
    } else if (t.s === '?') {
      const left = { ...node } as Node;
      become(node, { k: 'op', op: '?', left, prio: 0 });
      n = this.cond(node as Extract<Node, { k: 'op' }>);
    } else if (BINARY_OPS.has(t.s)) {
      const left = { ...node } as Node;
      const prio = left.k === 'null' ? 0 : opPrio(t.s);
      become(node, { k: 'op', op: t.s, left, prio });
      const me = node as Extract<Node, { k: 'op' }>;
      n = this.next();
      if (t.s === '*' && n && n.t === 'delim' && n.s === ')') {
        // "(void *)": a pointer type, not a product
        if (left.k !== 'atom') throw new Error('print fmt: bad pointer type');
        become(node, { k: 'atom', text: `${left.text} *` });
        return n;
      }
      right = fresh();
      n = this.argToken(right, n);
      if (right.k === 'op' && opPrio(me.op) < opPrio((right as { op: string }).op)) {
        const r = right as Extract<Node, { k: 'op' }>;
        me.right = r.left;
        const tmp = { ...me };
        become(node, { ...r });
        become(right, tmp);
        (node as Extract<Node, { k: 'op' }>).left = right;
      } else me.right = right;
    } else if (t.s === '[') {
      const left = { ...node } as Node;
      become(node, { k: 'op', op: '[', left, prio: 0 });
      const r = fresh();
      n = this.arg(r);
      this.want(n, ']');
      (node as Extract<Node, { k: 'op' }>).right = r;
      n = this.next();
    } else throw new Error(`print fmt: unknown op '${t.s}'`);
    if (isOp(n) && n.s !== ':') {
      // higher prios go closer to the root
      if (opPrio(n.s) > ((node as { prio?: number }).prio ?? 0)) return this.op(node, n);
      if (!right) throw new Error(`print fmt: misplaced '${n.s}'`);
      return this.op(right, n);
    }
    return n;
  }

  /** process_cond: `top` is the '?' op; its right becomes the ':' op of the two branches. */
  private cond(top: Extract<Node, { k: 'op' }>): Tok | undefined {
    const left = fresh();
    const right = fresh();
    let n = this.arg(left);
    while (isOp(n) && n.s !== ':') n = this.op(left, n);
    this.want(n, ':');
    n = this.arg(right);
    top.right = { k: 'op', op: ':', left, right, prio: 0 };
    return n;
  }

  /** `{ value, "name" }, …` then ')' (process_fields). */
  private entries(): { list: FlagEntry[]; after: Tok | undefined } {
    const list: FlagEntry[] = [];
    let n: Tok | undefined;
    do {
      // the ',' before this entry is consumed
      n = this.next();
      if (n?.s !== '{') break;
      const v = fresh();
      n = this.arg(v);
      if (isOp(n)) n = this.op(v, n);
      this.want(n, ',');
      const value = argEval(asArg(v));
      const sNode = fresh();
      n = this.arg(sNode);
      this.want(n, '}');
      list.push({ value, str: argEval(asArg(sNode)) });
      n = this.next();
    } while (n && n.s === ',');
    return { list, after: n };
  }

  private firstArg(): Node {
    const field = fresh();
    let n = this.arg(field);
    while (isOp(n)) n = this.op(field, n);
    this.want(n, ',');
    return field;
  }

  private nameArg(): string {
    const n = this.next();
    if (n?.t !== 'item') throw new Error('print fmt: expected a field name');
    if (!this.hasField(n.s)) throw new Error(`print fmt: no field '${n.s}'`);
    this.want(this.next(), ')');
    return n.s;
  }

  /** process_function: the helpers perf's libtraceevent knows; any other is kept to be refused. */
  private call(node: Node, name: string): Tok | undefined {
    switch (name) {
      case '__print_flags':
      case '__print_symbolic': {
        const field = this.firstArg() as PrintArg;
        let delim = '';
        if (name === '__print_flags') {
          let d = this.next();
          if (isItem(d)) {
            delim = d!.s;
            d = this.next();
          }
          this.want(d, ',');
        }
        const { list, after } = this.entries();
        this.want(after, ')');
        become(node, name === '__print_flags' ? { k: 'flags', field, delim, list } : { k: 'symbolic', field, list });
        return this.next();
      }
      case '__get_str':
      case '__get_rel_str':
        become(node, { k: 'string', name: this.nameArg() });
        return this.next();
      case '__get_dynamic_array_len':
      case '__get_rel_dynamic_array_len':
        become(node, { k: 'dynarray_len', name: this.nameArg() });
        return this.next();
      case '__get_dynamic_array':
      case '__get_rel_dynamic_array': {
        become(node, { k: 'dynarray', name: this.nameArg() });
        const n = this.next();
        if (n?.s !== '[') return n;
        return this.op(node, n);
      }
      default: {
        // skip the arguments: an event using an unknown helper is refused when printed
        let depth = 1;
        const args: PrintArg[] = [];
        while (depth > 0) {
          const t = this.next();
          if (!t) throw new Error(`print fmt: unterminated ${name}(`);
          if (t.s === '(') depth++;
          else if (t.s === ')') depth--;
        }
        become(node, { k: 'call', name, args });
        return this.next();
      }
    }
  }
}

/** Parse what follows "print fmt: " (event_read_print). `hasField` tells REC->name references that exist. */
export function parsePrintFmt(src: string, hasField: (name: string) => boolean): PrintFmt {
  const toks = tokenize(src);
  const first = toks[0];
  if (first?.t !== 'dq') throw new Error('print fmt does not start with a string');
  const p = new Parser(toks.slice(1), hasField);
  const args: PrintArg[] = [];
  let n = p.next();
  while (n && n.s === ',') {
    const node = fresh();
    n = p.arg(node);
    if (isOp(n)) n = p.op(node, n);
    args.push(asArg(node));
  }
  if (n) throw new Error(`print fmt: unexpected '${n.s}' after the arguments`);
  return { format: first.s, args };
}
