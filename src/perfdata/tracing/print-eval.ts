/**
 * The arithmetic of print fmt expressions as libtraceevent does it when it
 * parses a format (arg_eval / arg_num_eval for __print_flags and
 * __print_symbolic tables) and C's helpers it relies on (strtoll, casts).
 */
import type { PrintArg } from './print-arg.js';

/** C's strtoll(s, NULL, 0): the leading number, 0 when there is none ("1UL" is 1). */
export function strtoll(s: string): bigint {
  const m = /^\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)/.exec(s);
  if (!m) return 0n;
  const v = BigInt(m[2]!.startsWith('0') && !/^0[xX]/.test(m[2]!) && m[2]!.length > 1 ? `0o${m[2]!.slice(1)}` : m[2]!);
  return m[1] === '-' ? -v : v;
}

/** libtraceevent's eval_type_str for the casts it knows: the value kept to the type's bits. */
export function castValue(v: bigint, type: string): bigint {
  if (type.endsWith('*') || type.startsWith('struct')) return v;
  const t = type.replace(/^unsigned /, '');
  if (type === 'u8' || type === 's8' || t === 'char') return v & 0xffn;
  if (type === 'u16' || type === 's16' || t === 'short') return v & 0xffffn;
  if (type === 'u32' || type === 's32' || t === 'int') return v & 0xffffffffn;
  return v;
}

/** arg_eval: a flag/symbol entry's value as libtraceevent keeps it (a name stays a name). */
export function argEval(a: PrintArg): string {
  if (a.k === 'atom') return a.text;
  if (a.k === 'cast') return argEval(a.item);
  const v = a.k === 'op' ? numEval(a) : undefined;
  if (v === undefined) throw new Error('print fmt: a flag value libtraceevent cannot evaluate');
  return BigInt.asIntN(64, v).toString();
}

/** arg_num_eval: signed 64-bit arithmetic at parse time. */
function numEval(a: PrintArg): bigint | undefined {
  switch (a.k) {
    case 'atom':
      return strtoll(a.text);
    case 'null':
      return 0n;
    case 'cast': {
      const v = numEval(a.item);
      return v === undefined ? undefined : castValue(v, a.type);
    }
    case 'op': {
      if (a.op === '?' || a.op === '[' || a.op === ':') return undefined;
      const l = numEval(a.left);
      const r = numEval(a.right);
      if (l === undefined || r === undefined) return undefined;
      const v = binary(a.op, BigInt.asIntN(64, l), BigInt.asIntN(64, r));
      return v === undefined ? undefined : BigInt.asIntN(64, v);
    }
    default:
      return undefined;
  }
}

const b = (x: boolean): bigint => (x ? 1n : 0n);

/** A C binary operator on 64-bit values (the caller chooses signed or unsigned operands). */
export function binary(op: string, l: bigint, r: bigint): bigint | undefined {
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    case '/':
      return r === 0n ? undefined : l / r;
    case '%':
      return r === 0n ? undefined : l % r;
    case '<<':
      return l << (r & 63n);
    case '>>':
      return l >> (r & 63n);
    case '&':
      return l & r;
    case '|':
      return l | r;
    case '^':
      return l ^ r;
    case '~':
      return ~r;
    case '!':
      return b(r === 0n);
    case '&&':
      return b(l !== 0n && r !== 0n);
    case '||':
      return b(l !== 0n || r !== 0n);
    case '<':
      return b(l < r);
    case '>':
      return b(l > r);
    case '<=':
      return b(l <= r);
    case '>=':
      return b(l >= r);
    case '==':
      return b(l === r);
    case '!=':
      return b(l !== r);
    default:
      return undefined;
  }
}
