/**
 * The `pokes` and `sites` tables from a loaded Machine: the same facts as
 * `perfpoke pokes --json` (symbol, kind, bytes, instructions) and
 * `perfpoke check --json` (stale sites and their windows), one row each.
 */
import { judgeMachine, type CheckOutcome } from '../machine/check-verdict.js';
import type { PlacedPoke } from '../machine/code-image.js';
import { disassembleLine } from '../x86/disasm.js';
import type { Machine } from '../machine/from-perf-data.js';
import { classifyPoke } from '../x86/poke-kind.js';
import type { Poke } from '../machine/poke.js';
import { jsonBytes } from '../format/json-lines.js';
import type { Row } from './schema.js';
import { verdictsFrom, type VerdictOf } from './verdict.js';

/**
 * The poke's kind as `perfpoke pokes` names it: classifyPoke, then an fentry
 * nop ↔ call whose call goes to a BPF trampoline is a BPF attach/detach.
 * (The same rule as cli/commands/pokes.ts viewPoke, which export cannot import.)
 */
export function pokeKind(m: Machine, p: Poke): string {
  const at = { time: p.time, fileOffset: p.fileOffset };
  const sym = m.symbolizer.find(p.addr, at);
  const kind = classifyPoke(p, sym ? p.addr - sym.start : undefined);
  if (kind !== 'ftrace') return kind;
  const call = [p.newBytes, p.oldBytes].find((b) => b.length === 5 && b[0] === 0xe8);
  if (!call) return kind;
  const target = p.addr + 5n + BigInt(new DataView(call.buffer, call.byteOffset, 5).getInt32(1, true));
  return m.symbolizer.ksymbolAt(target, at)?.startsWith('bpf_trampoline') ? 'bpf-trampoline' : kind;
}

function pokeRow(m: Machine, p: Poke, placed: PlacedPoke | undefined, verdicts: VerdictOf): Row {
  const at = { time: p.time, fileOffset: p.fileOffset };
  const sym = m.symbolizer.symOff(p.addr, at);
  const ksym = m.symbolizer.ksymbolAt(p.addr, at);
  const nameTarget = (a: bigint): string => m.symbolizer.ksymbolAt(a, at) ?? m.symbolizer.symOff(a, at);
  return {
    offset: p.fileOffset,
    seq: placed ? placed.seq : null,
    time_ns: p.time,
    cpu: p.cpu,
    addr: p.addr,
    sym: sym || null,
    ksym: ksym && ksym !== sym ? ksym : null,
    kind: pokeKind(m, p),
    old_len: p.oldBytes.length,
    new_len: p.newBytes.length,
    old: jsonBytes(p.oldBytes),
    new: jsonBytes(p.newBytes),
    before: disassembleLine(p.oldBytes, p.addr, nameTarget),
    after: disassembleLine(p.newBytes, p.addr, nameTarget),
    site_start: placed ? placed.site.start : null,
    verdict: verdicts.poke(p, placed),
  };
}

export interface PokeTables {
  pokes: Row[];
  sites: Row[];
  /** `check`'s verdict, its reasons and report, as judged once for these rows. */
  outcome: CheckOutcome;
}

/** Pokes in apply order, then the ones perf ignores (as `perfpoke pokes` lists them). */
export function pokeTables(m: Machine): PokeTables {
  const outcome = judgeMachine(m);
  const report = outcome.report;
  const verdicts = verdictsFrom(report);
  const pokes = m.image.pokes.map((pp) => pokeRow(m, pp.poke, pp, verdicts));
  for (const p of m.image.ignoredPokes) pokes.push(pokeRow(m, p, undefined, verdicts));
  const staleAt = new Map(report.disagreements.map((d) => [d.siteStart, d]));
  const kindsBySite = new Map<bigint, Set<string>>();
  for (const r of pokes) {
    if (r.site_start === null) continue;
    const s = r.site_start as bigint;
    if (!kindsBySite.has(s)) kindsBySite.set(s, new Set());
    kindsBySite.get(s)!.add(r.kind as string);
  }
  const sites = m.image.sites.map((s): Row => {
    const d = staleAt.get(s.start);
    return {
      site_start: s.start,
      site_end: s.end,
      sym: m.symbolizer.symOff(s.start) || null,
      pokes: s.pokes.length,
      stale: d?.stale ?? 0,
      kinds: [...(kindsBySite.get(s.start) ?? [])].sort(),
      first_time_ns: s.pokes[0]?.poke.time ?? null,
      last_time_ns: s.pokes[s.pokes.length - 1]?.poke.time ?? null,
      lost_after_ns: d?.windowAfter ?? null,
      lost_before_ns: d?.windowBefore ?? null,
    };
  });
  return { pokes, sites, outcome };
}
