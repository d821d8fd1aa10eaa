import { Decoder, DecoderOptions, FlowControl, Formatter, FormatterSyntax, Mnemonic } from './iced.js';

/**
 * Display disassembly of poked bytes, AT&T syntax as GNU objdump -d prints it
 * (iced-x86's GAS formatter, lowercase hex, branch targets annotated with
 * `<sym+0xoff>` when a symbolizer is given). All x86 decoding goes through
 * src/x86 (iced-x86 behind it): this module for display, classify.ts and
 * block-cache.ts for the flow decoder.
 */
export interface DecodedInsn {
  ip: bigint;
  length: number;
  bytes: Uint8Array;
  text: string;
  mnemonic: 'nop' | 'int3' | 'call' | 'jmp' | 'ret' | 'other' | 'bad';
  /** Near branch target (call/jmp rel), if any. */
  target?: bigint;
}

let formatter: Formatter | undefined;
function getFormatter(): Formatter {
  if (!formatter) {
    formatter = new Formatter(FormatterSyntax.Gas);
    formatter.uppercaseHex = false;
  }
  return formatter;
}

/**
 * Decoded instructions of short byte strings, by (ip, bytes), before branch
 * targets are named: a recording with a million pokes flips a few thousand
 * sites between the same two byte strings, and iced-x86's wasm calls cost far
 * more than a lookup. Targets are named on every call (names change over a
 * recording: modules, BPF programs).
 */
const MEMO_BYTES = 16;
const MEMO_MAX = 1 << 16;
interface Decoded {
  bytes: Uint8Array;
  insns: readonly DecodedInsn[];
}
let memo = new Map<bigint, Decoded[]>();

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The decode of `bytes` at `ip`, targets not named; memoized entries are shared: read only. */
function decodedOf(bytes: Uint8Array, ip: bigint): readonly DecodedInsn[] {
  if (bytes.length > MEMO_BYTES) return decodeAll(bytes, ip);
  let at = memo.get(ip);
  if (at === undefined) {
    if (memo.size >= MEMO_MAX) memo = new Map();
    at = [];
    memo.set(ip, at);
  }
  for (const e of at) if (sameBytes(e.bytes, bytes)) return e.insns;
  const copy = bytes.slice();
  const insns = decodeAll(copy, ip);
  at.push({ bytes: copy, insns });
  return insns;
}

/** Decode every instruction in bytes (a truncated tail becomes one "(bad)"). */
export function disassemble(bytes: Uint8Array, ip: bigint, symbolize?: (addr: bigint) => string): DecodedInsn[] {
  const out: DecodedInsn[] = [];
  let pos = 0;
  for (const i of decodedOf(bytes, ip)) {
    const b = bytes.subarray(pos, pos + i.length);
    pos += i.length;
    const sym = i.target !== undefined ? symbolize?.(i.target) : undefined;
    out.push({ ...i, bytes: b, text: sym ? `${i.text} <${sym}>` : i.text });
  }
  return out;
}

/** The first instruction of `bytes` at `ip`, branch target not named (shared: read only). */
export function firstInsn(bytes: Uint8Array, ip: bigint): Readonly<DecodedInsn> | undefined {
  return decodedOf(bytes, ip)[0];
}

/** iced-x86's decode of `bytes` at `ip`, targets not yet named. */
function decodeAll(bytes: Uint8Array, ip: bigint): DecodedInsn[] {
  const out: DecodedInsn[] = [];
  if (bytes.length === 0) return out;
  const d = new Decoder(64, bytes, DecoderOptions.None);
  d.ip = ip;
  const f = getFormatter();
  try {
    let pos = 0;
    while (d.canDecode) {
      const i = d.decode();
      try {
        const len = i.length;
        const b = bytes.subarray(pos, pos + len);
        pos += len;
        if (i.isInvalid) {
          out.push({ ip: i.ip, length: len, bytes: b, text: '(bad)', mnemonic: 'bad' });
          continue;
        }
        const text = f.format(i);
        let kind: DecodedInsn['mnemonic'] = 'other';
        let target: bigint | undefined;
        const fc = i.flowControl;
        if (
          i.mnemonic === Mnemonic.Nop ||
          (i.mnemonic === Mnemonic.Xchg && len === 2 && b[0] === 0x66 && b[1] === 0x90)
        )
          kind = 'nop';
        else if (i.mnemonic === Mnemonic.Int3) kind = 'int3';
        else if (i.mnemonic === Mnemonic.Ret) kind = 'ret';
        else if (fc === FlowControl.Call && i.mnemonic === Mnemonic.Call) kind = 'call';
        else if (fc === FlowControl.UnconditionalBranch && i.mnemonic === Mnemonic.Jmp) kind = 'jmp';
        if (
          (kind === 'call' || kind === 'jmp') &&
          (fc === FlowControl.Call || fc === FlowControl.UnconditionalBranch)
        ) {
          const t = i.nearBranchTarget;
          if (t !== 0n || b[0] === 0xe8 || b[0] === 0xe9 || b[0] === 0xeb) target = t;
        }
        out.push({ ip: i.ip, length: len, bytes: b, text, mnemonic: kind, target });
      } finally {
        i.free();
      }
    }
  } finally {
    d.free();
  }
  return out;
}

/** "nopl 0x0(%rax,%rax,1); jmp ..." — one line for a poke's bytes. */
export function disassembleLine(bytes: Uint8Array, ip: bigint, symbolize?: (addr: bigint) => string): string {
  return insnsLine(decodedOf(bytes, ip), symbolize);
}

/**
 * The decode of `bytes` at `ip` outside the memo, for a caller that keeps
 * what it derives itself (`pokes` keeps whole lines per site): the memo's
 * entries would only duplicate that, at ~800 bytes each.
 */
export function decodeUnmemoized(bytes: Uint8Array, ip: bigint): readonly DecodedInsn[] {
  return decodeAll(bytes, ip);
}

/** disassembleLine of instructions already decoded. */
export function insnsLine(insns: readonly DecodedInsn[], symbolize?: (addr: bigint) => string): string {
  let line = '';
  for (const i of insns) {
    const sym = i.target !== undefined ? symbolize?.(i.target) : undefined;
    line += `${line ? '; ' : ''}${i.text}${sym ? ` <${sym}>` : ''}`;
  }
  return line;
}
