/**
 * Linux 6.1's double delivery. When several events set attr.text_poke, the
 * kernel writes every poke once per event (perf_event_text_poke iterates the
 * side-band events; every copy after the first also gets the inflated
 * header.size docs/real-kernel.md describes). Applying each copy would make
 * the second one stale against the first, so copies are folded into one poke
 * before the code image is built.
 *
 * Copies of one poke: same cpu, address, old and new bytes, each from a
 * different text_poke event, close in time. The kernel emits them in one
 * loop, under text_mutex, before the next poke; a file's equal times may
 * still interleave two pokes' copies, so each copy looks for its first among
 * the pokes still waiting for copies. The times differ: each event stamps
 * its own copy (a few µs apart; up to 110 µs in the qemu TCG fixture
 * perfpoke-two), so a copy may follow its first by at most COPY_WINDOW_NS.
 * A poke rewritten with the same bytes on purpose comes from the same event
 * and is never folded.
 */
import type { Poke } from './poke.js';

/** Longest gap between the first and the last copy of one poke. */
export const COPY_WINDOW_NS = 10_000_000n;

export interface PokeCopy {
  /** The folded copy. */
  copy: Poke;
  /** The copy kept (the first in time order). */
  of: Poke;
}

export interface FoldedPokes {
  /** Each poke once, in the input's order. */
  unique: Poke[];
  copies: PokeCopy[];
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameChange(a: Poke, b: Poke): boolean {
  return a.cpu === b.cpu && a.addr === b.addr && sameBytes(a.oldBytes, b.oldBytes) && sameBytes(a.newBytes, b.newBytes);
}

/**
 * Fold the copies. `eventOf` maps a poke to its event index (undefined when
 * the file records no id: then nothing is folded, as copies cannot be told
 * from a genuine rewrite); `textPokeEvents` is how many events set text_poke.
 */
export function foldCopies(
  pokes: readonly Poke[],
  eventOf: (p: Poke) => number | undefined,
  textPokeEvents: number,
): FoldedPokes {
  if (textPokeEvents < 2) return { unique: [...pokes], copies: [] };
  const order = pokes.map((_, i) => i);
  order.sort((i, j) => {
    const a = pokes[i]!;
    const b = pokes[j]!;
    return a.time < b.time ? -1 : a.time > b.time ? 1 : a.fileOffset - b.fileOffset;
  });
  const dropped = new Set<number>();
  const copies: PokeCopy[] = [];
  // pokes still waiting for copies: the kernel emits a poke's copies back to back, but equal
  // times (a file's own order) may interleave two pokes' copies, so each copy finds its first
  let open: { lead: Poke; events: Set<number> }[] = [];
  for (const i of order) {
    const p = pokes[i]!;
    const ev = eventOf(p);
    if (ev === undefined) continue;
    open = open.filter((g) => p.time - g.lead.time <= COPY_WINDOW_NS && g.events.size < textPokeEvents);
    const g = open.find((x) => !x.events.has(ev) && sameChange(x.lead, p));
    if (g) {
      g.events.add(ev);
      dropped.add(i);
      copies.push({ copy: p, of: g.lead });
      continue;
    }
    open.push({ lead: p, events: new Set([ev]) });
  }
  return { unique: pokes.filter((_, i) => !dropped.has(i)), copies };
}
