import { firstInsn, type DecodedInsn } from './disasm.js';
import type { Poke } from '../machine/poke.js';

/**
 * What a poke most likely is, from its bytes (and, to tell ftrace from a
 * static call, whether it sits at a function's entry):
 *
 *   trampoline-create  old_len 0 (ftrace/optprobe/BPF trampoline appears)
 *   trampoline-remove  new_len 0
 *   kprobe             INT3 written (new starts with cc) or taken out
 *                      (old starts with cc, new is not a jmp)
 *   optprobe           INT3 replaced by a jmp to the optprobe trampoline
 *   ftrace             5-byte nop ↔ call at a function entry (+0, or +4
 *                      after endbr64): the __fentry__ site
 *   jump-label         nop ↔ jmp (5-byte nop ↔ e9 rel32, 2-byte nop ↔ eb rel8)
 *   static-call        call/jmp → call/jmp to another target, or a call
 *                      site turned nop ↔ call away from the entry, or a
 *                      trampoline switched between jmp and ret
 *   other              anything else
 */
export type PokeKind =
  | 'trampoline-create'
  | 'trampoline-remove'
  | 'kprobe'
  | 'optprobe'
  | 'ftrace'
  | 'bpf-trampoline'
  | 'jump-label'
  | 'static-call'
  | 'other';

export const POKE_KINDS: readonly PokeKind[] = [
  'jump-label',
  'static-call',
  'ftrace',
  'bpf-trampoline',
  'trampoline-create',
  'trampoline-remove',
  'kprobe',
  'optprobe',
  'other',
];

/**
 * `symOffset`: the poke's offset in its symbol, when known. `decoded`: the
 * old and new bytes' instructions when the caller has them (else they come
 * from the disassembler's memo).
 */
export function classifyPoke(
  p: Poke,
  symOffset?: bigint,
  decoded?: { old: readonly DecodedInsn[]; new: readonly DecodedInsn[] },
): PokeKind {
  const o = p.oldBytes;
  const n = p.newBytes;
  if (o.length === 0 && n.length > 0) return 'trampoline-create';
  if (n.length === 0 && o.length > 0) return 'trampoline-remove';
  if (n[0] === 0xcc) return 'kprobe';
  const a = decoded ? decoded.old[0] : first(o, p.addr);
  const b = decoded ? decoded.new[0] : first(n, p.addr);
  if (o[0] === 0xcc) return b?.mnemonic === 'jmp' ? 'optprobe' : 'kprobe';
  if (!a || !b) return 'other';
  const atEntry = symOffset === 0n || symOffset === 4n;
  const pair = (x: string, y: string): boolean =>
    (a.mnemonic === x && b.mnemonic === y) || (a.mnemonic === y && b.mnemonic === x);
  if (pair('nop', 'call')) return atEntry ? 'ftrace' : 'static-call';
  if (pair('nop', 'jmp')) return 'jump-label';
  if ((a.mnemonic === 'call' && b.mnemonic === 'call') || (a.mnemonic === 'jmp' && b.mnemonic === 'jmp')) {
    return a.target !== b.target ? 'static-call' : 'other';
  }
  if (pair('jmp', 'ret') || pair('nop', 'ret') || pair('call', 'ret')) return 'static-call';
  return 'other';
}

function first(bytes: Uint8Array, ip: bigint): Readonly<DecodedInsn> | undefined {
  return firstInsn(bytes, ip);
}
