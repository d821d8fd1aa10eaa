import type { CodeImage } from './code-image.js';
import { PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER } from '../abi/record-type.js';
import type { KernelSymbolEvent } from './poke.js';

/**
 * Code the kernel added while recording: a TEXT_POKE with old_len 0 creates
 * it (ftrace/optprobe/BPF trampolines), one with new_len 0 at the same
 * address removes it. Usually a KSYMBOL (type OOL = 2 or BPF = 1) names it.
 */
export interface Trampoline {
  addr: bigint;
  len: number;
  created: bigint;
  /** Time of the removal; undefined while it still existed at the end. */
  removed?: bigint;
  /** KSYMBOL name registered at this address, if any. */
  name?: string;
  ksymType?: number;
}

/** In creation order. Cost: O(pokes + ksymbols). */
export function listTrampolines(image: CodeImage, ksymbols: readonly KernelSymbolEvent[] = []): Trampoline[] {
  const out: Trampoline[] = [];
  const live = new Map<bigint, Trampoline>();
  for (const pp of image.pokes) {
    const p = pp.poke;
    if (p.oldBytes.length === 0 && p.newBytes.length > 0) {
      const t: Trampoline = { addr: p.addr, len: p.newBytes.length, created: p.time };
      out.push(t);
      live.set(p.addr, t);
    } else if (p.newBytes.length === 0 && p.oldBytes.length > 0) {
      const t = live.get(p.addr);
      if (t) {
        t.removed = p.time;
        live.delete(p.addr);
      }
    }
  }
  const byAddr = new Map<bigint, KernelSymbolEvent>();
  for (const k of ksymbols) if (!(k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)) byAddr.set(k.addr, k);
  for (const t of out) {
    const k = byAddr.get(t.addr);
    if (k) {
      t.name = k.name;
      t.ksymType = k.ksymType;
    }
  }
  return out;
}
