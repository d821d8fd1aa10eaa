/**
 * C printf conversions for one value, as glibc prints them: what
 * libtraceevent's trace_seq_printf gives for a tracepoint's format string.
 * Only the conversions tracepoint formats use: d i u x X o with flags,
 * width, precision and length modifiers; s; and %p.
 */

export interface ConvSpec {
  /** '-', '0', '#', '+', ' ' as written. */
  flags: string;
  width?: number;
  precision?: number;
  /** Length modifier: '', 'hh', 'h', 'l', 'll', 'L', 'z', 'Z', 'j', 't'. */
  length: string;
  conv: string;
}

/** Parse "%08lx" (the whole conversion, '%' included); '*' width/precision come as `star`. */
export function parseConv(text: string, star?: number): ConvSpec {
  const m = /^%([-0#+ ]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|L|z|Z|j|t)*([a-zA-Z])$/.exec(text);
  if (!m) return { flags: '', length: '', conv: text.slice(-1) };
  const num = (s: string | undefined): number | undefined =>
    s === undefined ? undefined : s === '*' ? star : s === '' ? 0 : Number(s);
  // "%lu" / "%llu": the last modifier letters; glibc takes "l" twice as "ll"
  const lenText = /(?:hh|h|ll|l|L|z|Z|j|t)+(?=[a-zA-Z]$)/.exec(text.slice(1))?.[0] ?? '';
  return { flags: m[1] ?? '', width: num(m[2]), precision: num(m[3]), length: lenText, conv: m[5]! };
}

/** Bits printf reads for an integer conversion with this length modifier. */
function readBits(length: string): number {
  if (length === 'hh') return 8;
  if (length === 'h') return 16;
  if (length === '') return 32;
  return 64;
}

function pad(body: string, sign: string, prefix: string, s: ConvSpec, zeroOk: boolean): string {
  const width = s.width ?? 0;
  const len = sign.length + prefix.length + body.length;
  if (len >= width) return sign + prefix + body;
  if (s.flags.includes('-')) return sign + prefix + body + ' '.repeat(width - len);
  if (s.flags.includes('0') && zeroOk) return sign + prefix + '0'.repeat(width - len) + body;
  return ' '.repeat(width - len) + sign + prefix + body;
}

/**
 * An integer conversion of `value`, which the caller passed as a C value of
 * `passedBits` (8, 16, 32 sign-extended as C promotes them; 64).
 */
export function formatInt(s: ConvSpec, value: bigint, passedBits: number): string {
  const bits = readBits(s.length);
  // a 32-bit argument read as 64 bits: the register's upper half is zero
  let v = passedBits < 64 && bits === 64 ? BigInt.asUintN(32, BigInt.asIntN(passedBits, value)) : value;
  const signed = s.conv === 'd' || s.conv === 'i';
  v = signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
  const neg = v < 0n;
  const mag = neg ? -v : v;
  const radix = s.conv === 'x' || s.conv === 'X' ? 16 : s.conv === 'o' ? 8 : 10;
  let body = mag.toString(radix);
  if (s.conv === 'X') body = body.toUpperCase();
  if (s.precision !== undefined) body = s.precision === 0 && mag === 0n ? '' : body.padStart(s.precision, '0');
  let prefix = '';
  if (s.flags.includes('#') && mag !== 0n) {
    if (radix === 16) prefix = s.conv === 'X' ? '0X' : '0x';
    else if (radix === 8 && !body.startsWith('0')) body = `0${body}`;
  }
  let sign = '';
  if (signed) sign = neg ? '-' : s.flags.includes('+') ? '+' : s.flags.includes(' ') ? ' ' : '';
  return pad(body, sign, prefix, s, s.precision === undefined);
}

/** %s with its width and precision. */
export function formatStr(s: ConvSpec, str: string): string {
  const body = s.precision !== undefined ? str.slice(0, s.precision) : str;
  return pad(body, '', '', s, false);
}

/** glibc's %p: "(nil)" for 0, else 0x and lowercase hex. */
export function formatPointer(v: bigint): string {
  return v === 0n ? '(nil)' : `0x${BigInt.asUintN(64, v).toString(16)}`;
}

/** C's "%0Nd": the sign comes before the zeros. */
export function zeroPad(n: number, w: number): string {
  return n < 0 ? `-${String(-n).padStart(w - 1, '0')}` : String(n).padStart(w, '0');
}
