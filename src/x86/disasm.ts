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

/** Decode every instruction in bytes (a truncated tail becomes one "(bad)"). */
export function disassemble(bytes: Uint8Array, ip: bigint, symbolize?: (addr: bigint) => string): DecodedInsn[] {
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
        let text = f.format(i);
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
          if (t !== 0n || b[0] === 0xe8 || b[0] === 0xe9 || b[0] === 0xeb) {
            target = t;
            const sym = symbolize?.(t);
            if (sym) text += ` <${sym}>`;
          }
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
  return disassemble(bytes, ip, symbolize)
    .map((i) => i.text)
    .join('; ');
}
