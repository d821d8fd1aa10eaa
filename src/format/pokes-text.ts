/**
 * `perfpoke pokes` output: one line per TEXT_POKE (time, cpu, address,
 * sym+off as perf names it, lengths, old -> new bytes, the instructions
 * before -> after, what kind of poke it looks like), or one JSON Lines
 * object per poke (`type: "poke"`, docs/json/poke.schema.json).
 */
import { disassembleLine } from '../x86/disasm.js';
import type { Machine } from '../machine/from-perf-data.js';
import { classifyPoke } from '../x86/poke-kind.js';
import { hexBytes } from '../io/hex.js';
import type { Poke } from '../machine/poke.js';
import { formatPerfTime } from '../machine/time-format.js';
import { jsonBytes, jsonHex, jsonLine, jsonTime } from './json-lines.js';

export interface PokeView {
  poke: Poke;
  time: string;
  cpu: number;
  addr: string;
  sym: string;
  /** The KSYMBOL naming this address, when it differs from perf's `sym` (trampolines, BPF). */
  ksym?: string;
  before: string;
  after: string;
  kind: string;
  consistent: boolean;
  /** Set on Linux 6.1's extra copy of a poke (shown with --all-copies): the copy kept. */
  copyOf?: Poke;
}

export function viewPoke(m: Machine, p: Poke, consistent: boolean, copyOf?: Poke): PokeView {
  const at = { time: p.time, fileOffset: p.fileOffset };
  const symbolize = (a: bigint): string => m.symbolizer.symOff(a, at);
  const sym = m.symbolizer.find(p.addr, at);
  const perfSym = symbolize(p.addr);
  // branch targets: the code's own KSYMBOL name first (a BPF trampoline says so), else perf's
  const nameTarget = (a: bigint): string => m.symbolizer.ksymbolAt(a, at) ?? symbolize(a);
  const ksym = m.symbolizer.ksymbolAt(p.addr, at);
  let kind: string = classifyPoke(p, sym ? p.addr - sym.start : undefined);
  // an fentry nop <-> call whose call goes to a BPF trampoline is a BPF attach/detach, not ftrace
  const call = kind === 'ftrace' ? [p.newBytes, p.oldBytes].find((b) => b.length === 5 && b[0] === 0xe8) : undefined;
  if (call) {
    const target = p.addr + 5n + BigInt(new DataView(call.buffer, call.byteOffset, 5).getInt32(1, true));
    if (m.symbolizer.ksymbolAt(target, at)?.startsWith('bpf_trampoline')) kind = 'bpf-trampoline';
  }
  return {
    poke: p,
    time: formatPerfTime(p.time),
    cpu: p.cpu,
    addr: p.addr.toString(16),
    sym: perfSym,
    ...(ksym && ksym !== perfSym ? { ksym } : {}),
    before: disassembleLine(p.oldBytes, p.addr, nameTarget),
    after: disassembleLine(p.newBytes, p.addr, nameTarget),
    kind,
    consistent,
    ...(copyOf ? { copyOf } : {}),
  };
}

/** The views `pokes` prints: each poke once in perf's order, then non-kernel ones; copies after their poke. */
export function pokeViews(m: Machine, opts: { site?: bigint; allCopies?: boolean } = {}): PokeView[] {
  return [...eachPokeView(m, opts)];
}

/** pokeViews one at a time, so a caller can print a million pokes without holding their text. */
export function* eachPokeView(m: Machine, opts: { site?: bigint; allCopies?: boolean } = {}): Generator<PokeView> {
  const copiesOf = new Map<Poke, Poke[]>();
  if (opts.allCopies)
    for (const c of m.copies) {
      const l = copiesOf.get(c.of);
      if (l) l.push(c.copy);
      else copiesOf.set(c.of, [c.copy]);
    }
  const one = function* (p: Poke, consistent: boolean): Generator<PokeView> {
    yield viewPoke(m, p, consistent);
    for (const c of copiesOf.get(p) ?? []) yield viewPoke(m, c, consistent, p);
  };
  if (opts.site !== undefined)
    for (const pp of m.image.pokesIn(opts.site, opts.site + 1n)) yield* one(pp.poke, pp.consistent);
  else {
    // every poke, from the image's columns: one transient object per poke, none kept (a poke with
    // copies is the store's own object, so copiesOf finds it)
    const { order, store, consistentAt } = m.image;
    for (let q = 0; q < order.length; q++) yield* one(store.peek(order[q]!), consistentAt[q] === 1);
  }
  if (opts.site === undefined) for (const p of m.image.ignoredPokes) yield viewPoke(m, p, false);
}

/** The closing notes of `pokes` (after the poke lines). */
export function pokesNotes(m: Machine, allCopies: boolean): string[] {
  const out: string[] = [];
  if (m.image.ignoredPokes.length > 0)
    out.push(`(${m.image.ignoredPokes.length} poke(s) with non-kernel cpumode listed last: perf ignores them)`);
  if (m.copies.length > 0 && !allCopies)
    out.push(
      `(${m.copies.length} poke(s) delivered twice, one copy per text_poke event, listed once: ` +
        '--all-copies shows them)',
    );
  return out;
}

export function formatPokeLine(v: PokeView): string {
  const p = v.poke;
  const cpu = v.cpu >= 0 ? v.cpu.toString().padStart(3, '0') : '---';
  const bytes = `${hexBytes(p.oldBytes) || '(none)'} -> ${hexBytes(p.newBytes) || '(none)'}`;
  const insns = `${v.before || '(no code)'} -> ${v.after || '(no code)'}`;
  const tail = v.copyOf
    ? `  (copy: the same poke as at ${formatPerfTime(v.copyOf.time)}, from another text_poke event)`
    : v.consistent
      ? ''
      : '  STALE (old bytes differ from the image)';
  const where = `${v.addr} ${v.sym || '?'}${v.ksym ? ` (ksymbol ${v.ksym})` : ''}`;
  const lens = `${p.oldBytes.length}/${p.newBytes.length}`;
  return `${v.time.padStart(16)} [${cpu}] ${where} ${v.kind} len ${lens}: ${bytes} | ${insns}${tail}`;
}

/** The text lines of `pokes`, with its closing notes. */
export function pokesText(m: Machine, views: PokeView[], allCopies: boolean): string[] {
  return [...views.map(formatPokeLine), ...pokesNotes(m, allCopies)];
}

/** One `type: "poke"` JSON line (docs/json/poke.schema.json). */
export function pokeJsonLine(v: PokeView): string {
  const p = v.poke;
  return jsonLine({
    type: 'poke',
    ...jsonTime(p.time),
    cpu: p.cpu,
    addr: jsonHex(p.addr),
    sym: v.sym,
    ...(v.ksym ? { ksym: v.ksym } : {}),
    kind: v.kind,
    old_len: p.oldBytes.length,
    new_len: p.newBytes.length,
    old: jsonBytes(p.oldBytes),
    new: jsonBytes(p.newBytes),
    before: v.before,
    after: v.after,
    consistent: v.consistent,
    file_offset: p.fileOffset,
    ...(p.id !== undefined ? { id: jsonHex(p.id) } : {}),
    ...(v.copyOf ? { copy_of: jsonTime(v.copyOf.time) } : {}),
  });
}
