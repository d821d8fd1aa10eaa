import type { Instruction } from './iced.js';
import { icedModule } from './iced-lazy.js';

let shared: Instruction | undefined;

/**
 * The length of the instruction at the start of `bytes` in 32- or 64-bit
 * code, or 0 when the bytes are not a complete valid instruction (what perf's
 * arch_fetch_insn leaves as insn_len 0 when the kernel's insn_decode fails).
 */
export function insnLength(bytes: Uint8Array, bitness: 32 | 64): number {
  if (bytes.length === 0) return 0;
  const { Decoder, DecoderOptions, Instruction } = icedModule();
  const d = new Decoder(bitness, bytes, DecoderOptions.None);
  try {
    shared ??= new Instruction();
    d.decodeOut(shared);
    return shared.isInvalid ? 0 : shared.length;
  } finally {
    d.free();
  }
}
