/**
 * The columnar kallsyms parse and table against a plain model of perf's
 * rules (one object per line, bigint arithmetic: the form this code had
 * before it kept columns), on generated kallsyms text and on this host's
 * /proc/kallsyms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseKallsyms, readKallsymsText } from './kallsyms.js';
import { kallsymsTable } from './kallsyms-table.js';
import type { AddrRange, KernelSymbol, SymbolTable } from './symbols.js';

interface ModelEntry {
  addr: bigint;
  type: string;
  name: string;
  module?: string;
}

function modelParse(text: string): ModelEntry[] {
  const out: ModelEntry[] = [];
  for (const line of text.split('\n')) {
    const sp1 = line.indexOf(' ');
    if (sp1 <= 0 || line.length < sp1 + 4 || line[sp1 + 2] !== ' ') continue;
    const hex = line.slice(0, sp1);
    if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) continue;
    let name = line.slice(sp1 + 3);
    let module: string | undefined;
    const tab = name.indexOf('\t');
    if (tab >= 0) {
      const m = /\[([^\]]*)\]/.exec(name.slice(tab + 1));
      module = m ? m[1] : name.slice(tab + 1).trim();
      name = name.slice(0, tab);
    }
    out.push({ addr: BigInt(`0x${hex}`), type: line[sp1 + 1]!, name, module });
  }
  return out;
}

interface W extends KernelSymbol {
  full: string;
  bind: 'weak' | 'global' | 'local';
  seq: number;
}

const PAGE = 4096n;
const roundup = (x: bigint): bigint => ((x + PAGE - 1n) / PAGE) * PAGE;
const lead = (s: string): number => s.length - s.replace(/^_+/, '').length;

function better(a: W, b: W): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (lb === 0n && la > 0n) return true;
  if (la === 0n && lb > 0n) return false;
  for (const [x, y] of [
    [b.bind === 'weak', a.bind === 'weak'],
    [a.bind === 'global', b.bind === 'global'],
    [lead(b.full) > lead(a.full), lead(a.full) > lead(b.full)],
    [a.full.length > b.full.length, a.full.length < b.full.length],
  ] as const) {
    if (x && !y) return true;
    if (y && !x) return false;
  }
  return true;
}

function modelTable(entries: ModelEntry[], maps: AddrRange[], kernelOnly: boolean): KernelSymbol[] {
  const w: W[] = [];
  for (const e of entries) {
    if (!/^[TWDBtwdb]$/.test(e.type) || e.name.startsWith('$')) continue;
    const bind = /^[Ww]$/.test(e.type) ? 'weak' : /^[A-Z]$/.test(e.type) ? 'global' : 'local';
    const full = e.module !== undefined ? `${e.name}\t[${e.module}]` : e.name;
    w.push({ start: e.addr, end: e.addr, name: e.name, module: e.module, full, bind, seq: w.length });
  }
  w.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.seq - b.seq));
  for (let i = 1; i < w.length; i++) {
    const p = w[i - 1]!;
    p.end = p.full.includes('[') !== w[i]!.full.includes('[') ? roundup(p.end + PAGE) : w[i]!.start;
  }
  const last = w[w.length - 1];
  if (last) last.end = roundup(last.start) + PAGE;
  const dedup: W[] = [];
  for (const s of w) {
    const c = dedup[dedup.length - 1];
    if (c && c.start === s.start) {
      if (!better(c, s)) dedup[dedup.length - 1] = s;
    } else dedup.push(s);
  }
  const sorted = [...maps].sort((a, b) => (a.start < b.start ? -1 : 1));
  const out: KernelSymbol[] = [];
  for (const s of dedup) {
    if (kernelOnly && s.module !== undefined) continue;
    let end = s.end;
    if (sorted.length > 0) {
      const m = sorted.find((r) => s.start >= r.start && s.start < r.end);
      if (!m) continue;
      if (end > m.end) end = m.end;
    }
    out.push({ start: s.start, end, name: s.name, module: s.module });
  }
  return out;
}

function modelFind(syms: KernelSymbol[], addr: bigint): KernelSymbol | undefined {
  const s = syms.filter((x) => x.start <= addr).pop();
  return s && (addr < s.end || (addr === s.start && s.start === s.end)) ? s : undefined;
}

const plain = (s: KernelSymbol | undefined) => s && { start: s.start, end: s.end, name: s.name, module: s.module };

function sameAsModel(text: string, maps: AddrRange[], kernelOnly: boolean, probes: bigint[]): void {
  const k = parseKallsyms(text);
  const entries = modelParse(text);
  assert.deepEqual(k.entries(), entries);
  assert.equal(k.find('_text'), entries.find((e) => e.name === '_text' && e.module === undefined)?.addr);
  const want = modelTable(entries, maps, kernelOnly);
  const t: SymbolTable = kallsymsTable(k, maps, { kernelOnly });
  assert.equal(t.length, want.length);
  for (let i = 0; i < want.length; i++) assert.deepEqual(plain(t.symbolAt(i)), want[i]);
  // a copy: fast-check hands the same array to the runs that shrink a failure
  const at = [...probes];
  for (const s of want) at.push(s.start, s.start - 1n, s.end - 1n, s.end);
  for (const a of at) assert.deepEqual(plain(t.find(a)), modelFind(want, a), `find 0x${a.toString(16)}`);
  for (const n of ['_text', 'a[b', 'x']) {
    assert.deepEqual(
      plain(t.findName(n, true)),
      want.find((s) => s.name === n && s.module === undefined),
    );
    assert.deepEqual(
      plain(t.findName(n, false)),
      want.find((s) => s.name === n),
    );
  }
}

const K = 0xffffffff81000000n;
const TOP = (1n << 64n) - 0x1800n;
// few addresses, so that lines share them and perf's tie rules decide
const addrArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(K, K + 0x10n, K + 0x1000n, 0xffffffffc0000000n, TOP) },
  { weight: 1, arbitrary: fc.constantFrom(K + 0xfffn, 0n, 0xfffn, TOP + 0x7ffn) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }) },
);
const hexArb = fc.tuple(addrArb, fc.boolean(), fc.integer({ min: 0, max: 2 })).map(([a, upper, pad]) => {
  const h = '0'.repeat(pad) + a.toString(16);
  return upper ? h.toUpperCase() : h;
});
const hex = (a: bigint) => a.toString(16);
/** Lines of every shape perf meets, odd ones included. */
const anyLineArb = fc
  .tuple(
    hexArb,
    fc.constantFrom('T', 't', 'W', 'w', 'D', 'd', 'B', 'b', 'R', 'r', 'A', 'U', 'é'),
    fc.constantFrom('_text', 'x', 'y', 'ab', '__x', '___', 'a[b', '$d', '', '_', 'x\r', 'é'),
    fc.constantFrom('', '', '\t[mod]', '\t[m2]', '\t[]', '\t nob ', '\t[a] [b]', '\t[open', '\tx[y]z'),
  )
  .map(([h, t, n, m]) => `${h} ${t} ${n}${m}`);
/**
 * Kernel and module lines at two addresses, with names whose full names
 * ("ab\t[mod]" and "abcdefgh") tie in length: symbols of both kinds at one
 * address both have a length, so perf's later rules (weak, global,
 * underscores, name length, first) choose between them.
 */
const tieLineArb = fc
  .tuple(
    fc.constantFrom(K, K + 0x1000n),
    fc.constantFrom('T', 't', 'W', 'w'),
    fc.constantFrom('abcdefgh', 'ab', 'ba', '_abcdefg', '_a', 'x'),
    fc.constantFrom('', '\t[mod]'),
  )
  .map(([a, t, n, m]) => `${hex(a)} ${t} ${n}${m}`);
const junkArb = fc.constantFrom(
  '',
  'not a line',
  'zz T bad',
  'ffff  T x',
  'ffff T',
  'ffff Tx y',
  '12345678901234567 T big',
);
const linesArb = fc.oneof(
  fc.array(fc.oneof({ weight: 8, arbitrary: anyLineArb }, { weight: 1, arbitrary: junkArb }), { maxLength: 40 }),
  fc.array(tieLineArb, { maxLength: 8 }),
);
const mapArb = fc
  .tuple(addrArb, fc.bigInt({ min: 1n, max: 0x3000n }))
  .map(([start, len]) => ({ start, end: start + len }));

test('kallsyms parse and table equal the model of perf, for any text, maps and probes', () => {
  fc.assert(
    fc.property(
      linesArb,
      fc.array(mapArb, { maxLength: 3 }),
      fc.boolean(),
      fc.array(addrArb, { maxLength: 5 }),
      (lines, maps, kernelOnly, probes) => sameAsModel(lines.join('\n'), maps, kernelOnly, probes),
    ),
    { numRuns: 1000 },
  );
});

test("this host's /proc/kallsyms: table equal to the model (kernel only and all)", (t) => {
  let text: string;
  try {
    text = readKallsymsText('/proc/kallsyms');
  } catch {
    t.skip('no /proc/kallsyms');
    return;
  }
  const k = parseKallsyms(text);
  const want = modelTable(modelParse(text), [], true);
  const got = kallsymsTable(k, [], { kernelOnly: true });
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.deepEqual(plain(got.symbolAt(i)), want[i]);
  assert.equal(kallsymsTable(k, []).length, modelTable(modelParse(text), [], false).length);
});
