/**
 * `perfpoke pokes` output: one line per TEXT_POKE (time, cpu, address,
 * sym+off as perf names it, lengths, old -> new bytes, the instructions
 * before -> after, what kind of poke it looks like), or one JSON Lines
 * object per poke (`type: "poke"`, docs/json/poke.schema.json).
 */
import { decodeUnmemoized, insnsLine } from '../x86/disasm.js';
import type { Machine } from '../machine/from-perf-data.js';
import { classifyPoke } from '../x86/poke-kind.js';
import { hexBytes } from '../io/hex.js';
import type { Poke } from '../machine/poke.js';
import { formatPerfTime, formatPerfTimeTo } from '../machine/time-format.js';
import { PAD_ZERO } from '../io/byte-text.js';
import { jsonBytes, jsonHex, jsonLine, jsonTime } from './json-lines.js';
import { PokeTextCache } from './poke-text-cache.js';
import type { TextSink } from './text-sink.js';

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
  /** The text these fields came from, which other pokes may share (it keeps formatPokeLine's middle). */
  text?: PokeText;
}

/** What a poke's line says besides its time, cpu and consistency (pokeText makes it). */
export interface PokeText {
  addr: string;
  sym: string;
  /** The KSYMBOL naming this address, when it differs from perf's `sym` (trampolines, BPF). */
  ksym?: string;
  kind: string;
  before: string;
  after: string;
  /** The text line's part from the address to the instructions, made on first use. */
  middle?: string;
}

/**
 * The address, names, kind and instructions of poke p, as perf names them at
 * its point of the recording. Decoded outside the disassembler's memo: a
 * caller that prints many pokes keeps the result (PokeTextCache).
 */
export function pokeText(m: Machine, p: Poke): PokeText {
  const at = { time: p.time, fileOffset: p.fileOffset };
  const symbolize = (a: bigint): string => m.symbolizer.symOff(a, at);
  const sym = m.symbolizer.find(p.addr, at);
  const perfSym = symbolize(p.addr);
  // branch targets: the code's own KSYMBOL name first (a BPF trampoline says so), else perf's
  const nameTarget = (a: bigint): string => m.symbolizer.ksymbolAt(a, at) ?? symbolize(a);
  const ksym = m.symbolizer.ksymbolAt(p.addr, at);
  const decoded = { old: decodeUnmemoized(p.oldBytes, p.addr), new: decodeUnmemoized(p.newBytes, p.addr) };
  let kind: string = classifyPoke(p, sym ? p.addr - sym.start : undefined, decoded);
  // an fentry nop <-> call whose call goes to a BPF trampoline is a BPF attach/detach, not ftrace
  const call = kind === 'ftrace' ? [p.newBytes, p.oldBytes].find((b) => b.length === 5 && b[0] === 0xe8) : undefined;
  if (call) {
    const target = p.addr + 5n + BigInt(new DataView(call.buffer, call.byteOffset, 5).getInt32(1, true));
    if (m.symbolizer.ksymbolAt(target, at)?.startsWith('bpf_trampoline')) kind = 'bpf-trampoline';
  }
  // flat strings: the text is kept (PokeTextCache; see pokeLineMiddle)
  return {
    addr: p.addr.toString(16),
    sym: flat(perfSym),
    ...(ksym && ksym !== perfSym ? { ksym: flat(ksym) } : {}),
    kind,
    before: flat(insnsLine(decoded.old, nameTarget)),
    after: flat(insnsLine(decoded.new, nameTarget)),
  };
}

/**
 * s as one flat string: V8 builds a concatenation as a tree of its pieces,
 * and reading a character flattens it in place (the pieces become garbage).
 */
function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}

/** `text`: the poke's pokeText when the caller has it. */
export function viewPoke(m: Machine, p: Poke, consistent: boolean, copyOf?: Poke, text = pokeText(m, p)): PokeView {
  return {
    poke: p,
    time: formatPerfTime(p.time),
    cpu: p.cpu,
    addr: text.addr,
    sym: text.sym,
    ...(text.ksym ? { ksym: text.ksym } : {}),
    before: text.before,
    after: text.after,
    kind: text.kind,
    consistent,
    ...(copyOf ? { copyOf } : {}),
    text,
  };
}

/** The views `pokes` prints: each poke once in perf's order, then non-kernel ones; copies after their poke. */
export function pokeViews(m: Machine, opts: { site?: bigint; allCopies?: boolean } = {}): PokeView[] {
  return [...eachPokeView(m, opts)];
}

/**
 * pokeViews one at a time, so a caller can print a million pokes without
 * holding their text; the texts they share are made once (PokeTextCache).
 */
export function* eachPokeView(m: Machine, opts: { site?: bigint; allCopies?: boolean } = {}): Generator<PokeView> {
  const copiesOf = new Map<Poke, Poke[]>();
  if (opts.allCopies)
    for (const c of m.copies) {
      const l = copiesOf.get(c.of);
      if (l) l.push(c.copy);
      else copiesOf.set(c.of, [c.copy]);
    }
  const texts = new PokeTextCache(m.image, m.symbolizer, (p) => pokeText(m, p));
  const one = function* (seq: number, p: Poke, consistent: boolean): Generator<PokeView> {
    yield viewPoke(m, p, consistent, undefined, texts.applied(seq, p));
    for (const c of copiesOf.get(p) ?? []) yield viewPoke(m, c, consistent, p, texts.copyOf(c));
  };
  if (opts.site !== undefined)
    for (const pp of m.image.pokesIn(opts.site, opts.site + 1n)) yield* one(pp.seq, pp.poke, pp.consistent);
  else {
    // every poke, from the image's columns: one transient object per poke, none kept (a poke with
    // copies is the store's own object, so copiesOf finds it)
    const { order, store, consistentAt } = m.image;
    for (let q = 0; q < order.length; q++) yield* one(q, store.peek(order[q]!), consistentAt[q] === 1);
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
  const cpu = v.cpu >= 0 ? v.cpu.toString().padStart(3, '0') : '---';
  const tail = v.copyOf
    ? `  (copy: the same poke as at ${formatPerfTime(v.copyOf.time)}, from another text_poke event)`
    : v.consistent
      ? ''
      : STALE;
  // the pokes of one text share address, bytes and names: their middle is made once
  const t = v.text;
  let middle = t?.middle;
  if (middle === undefined) {
    middle = pokeLineMiddle(v.poke, t ?? v);
    if (t) t.middle = middle;
  }
  return `${v.time.padStart(16)} [${cpu}] ${middle}${tail}`;
}

const STALE = '  STALE (old bytes differ from the image)';

/**
 * A line's part from the address to the instructions, as one flat string
 * (it is kept: a concatenation keeps its pieces, ~350 bytes where the flat
 * text takes ~160).
 */
function pokeLineMiddle(p: Poke, t: PokeText): string {
  const bytes = `${hexBytes(p.oldBytes) || '(none)'} -> ${hexBytes(p.newBytes) || '(none)'}`;
  const insns = `${t.before || '(no code)'} -> ${t.after || '(no code)'}`;
  const where = `${t.addr} ${t.sym || '?'}${t.ksym ? ` (ksymbol ${t.ksym})` : ''}`;
  const lens = `${p.oldBytes.length}/${p.newBytes.length}`;
  return flat(`${where} ${t.kind} len ${lens}: ${bytes} | ${insns}`);
}

/**
 * The lines of `pokes` without --site or --all-copies (formatPokeLine's
 * bytes), written straight into the sink: per poke only its time, cpu and
 * consistency are formatted, the rest is made once per (address, bytes)
 * (PokeTextCache) and no object is made.
 */
export function writePokeLines(m: Machine, sink: TextSink): void {
  const { order, store: st, consistentAt } = m.image;
  const middles = new PokeTextCache(m.image, m.symbolizer, (p) => pokeLineMiddle(p, pokeText(m, p)));
  const out = sink.bytes;
  for (let q = 0; q < order.length; q++) {
    const i = order[q]!;
    const middle = middles.applied(q);
    formatPerfTimeTo(out, st.timeHi[i]!, st.timeLo[i]!, 16);
    out.str(' [');
    const cpu = st.cpu[i]!;
    if (cpu >= 0) out.dec(cpu, 3, PAD_ZERO);
    else out.str('---');
    out.str('] ');
    out.str(middle);
    if (consistentAt[q] !== 1) out.str(STALE);
    out.byte(0x0a);
    sink.wrote();
  }
  for (const p of m.image.ignoredPokes) sink.write(`${formatPokeLine(viewPoke(m, p, false))}\n`);
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
