/**
 * Genuine text pokes from a real kernel (Debian's Linux 6.1 under qemu),
 * recorded by scripts/qemu (see test/fixtures/real-kernel/README.md):
 *
 *   perf-alone/        perf 6.1 alone:  perf record --kcore -a -e dummy -- workload
 *   kcore_after_alone/ kernel text copied again after that
 *   perf-kcore/        perf 6.1 ┐ the same run, both system wide at the same
 *   perfpoke-kcore/    perfpoke ┘ time (phase B)
 *   kcore_after/       kernel text copied again after phase B
 *
 * The workload flips a tracepoint, a sysctl static key, the function tracer,
 * kprobes (INT3, optprobe) and a BPF fentry trampoline. Nothing here is
 * compared with values copied from our own output: bytes are compared with
 * the kernel's own later copy of its text (kcore_after), and addresses,
 * symbols and bytes with what perf 6.1 prints for the same files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { repoRoot, runCli, runPerf } from './cli.js';
import { flatPokes } from './json-lines.js';
import { CodeImage, checkImage, loadKcoreDir, loadMachine, type KcoreDir, type Machine } from '../src/machine/index.js';
import { PerfFile, attrLayout, decodeSampleId } from '../src/perfdata/index.js';
import { ByteReader } from '../src/io/byte-reader.js';
import { cannotCompare } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const FIX = join(repoRoot, 'test', 'fixtures', 'real-kernel');
const PHASES = [
  { rec: 'perf-alone', after: 'kcore_after_alone', by: 'perf 6.1 alone' },
  { rec: 'perfpoke-kcore', after: 'kcore_after', by: 'perfpoke, perf running too' },
  // phase C: one file, two text_poke events, so Linux 6.1 wrote every poke twice (folded on load)
  { rec: 'perfpoke-two', after: 'kcore_after_two', by: 'perfpoke with two text_poke events' },
] as const;
const hex = (a: bigint): string => a.toString(16);

function present(...names: string[]): string | undefined {
  for (const n of names)
    if (!existsSync(join(FIX, n)))
      return `test/fixtures/real-kernel/${n} is missing (make it with npm run qemu-fixture)`;
  return undefined;
}

function dirBytes(d: string): number {
  let n = 0;
  for (const e of readdirSync(d, { withFileTypes: true }))
    n += e.isDirectory() ? dirBytes(join(d, e.name)) : statSync(join(d, e.name)).size;
  return n;
}

// ------------------------------------------------------------ perf 6.1's view
interface ScriptPoke {
  time: string;
  addr: bigint;
  sym: string;
  old: string;
  new: string;
}

/** The TEXT_POKE events of `perf script --show-text-poke-events`, in perf's order. */
function parsePerfScript(text: string): ScriptPoke[] {
  const out: ScriptPoke[] = [];
  let cur: (ScriptPoke & { o: string[]; n: string[] }) | undefined;
  const flush = (): void => {
    if (cur) out.push({ time: cur.time, addr: cur.addr, sym: cur.sym, old: cur.o.join(' '), new: cur.n.join(' ') });
    cur = undefined;
  };
  for (const line of text.split('\n')) {
    const m = /\s(\d+\.\d+):\s+PERF_RECORD_TEXT_POKE ([0-9a-f]+) (.*?) ?old len (\d+) new len (\d+)$/.exec(line);
    if (m) {
      flush();
      cur = { time: m[1]!, addr: BigInt(`0x${m[2]!}`), sym: m[3]!.trim(), old: '', new: '', o: [], n: [] };
      continue;
    }
    const b = /^\s+(Old|New) bytes: (.*)$/.exec(line);
    if (b && cur) (b[1] === 'Old' ? cur.o : cur.n).push(b[2]!.trim());
    else if (/PERF_RECORD_/.test(line)) flush();
  }
  flush();
  return out;
}

function perfScript(dir: string): { pokes: ScriptPoke[]; stderr: string } | null {
  const r = runPerf(['script', '-i', dir, '--show-text-poke-events']);
  if (!r) return null;
  assert.equal(r.status, 0, `perf script -i ${dir}: ${r.stderr}`);
  return { pokes: parsePerfScript(r.stdout), stderr: r.stderr };
}

// ------------------------------------------------------------ helpers
interface JsonPoke {
  addr: string;
  sym: string;
  old: string;
  new: string;
  time: string;
  kind: string;
  fileOffset: number;
}
const pokesJson = new Map<string, JsonPoke[]>();
/** `perfpoke pokes -i DIR --json` (run once per recording). */
function perfpokePokes(rec: string): JsonPoke[] {
  if (!pokesJson.has(rec)) {
    const r = runCli(['pokes', '-i', join(FIX, rec), '--json']);
    assert.equal(r.status, 0, r.stderr);
    pokesJson.set(rec, flatPokes(r.stdout));
  }
  return pokesJson.get(rec)!;
}

const machines = new Map<string, Promise<Machine>>();
function machine(rec: string): Promise<Machine> {
  if (!machines.has(rec)) machines.set(rec, loadMachine(join(FIX, rec)));
  return machines.get(rec)!;
}

function afterByte(after: KcoreDir, addr: bigint): number | undefined {
  for (const s of after.segments) {
    if (addr >= s.vaddr && addr < s.vaddr + BigInt(s.bytes.length)) return s.bytes[Number(addr - s.vaddr)];
  }
  return undefined;
}

/** kcore_dir bytes at [addr, addr+len), or undefined when no segment holds them all. */
function baseBytes(k: KcoreDir | undefined, addr: bigint, len: number): Uint8Array | undefined {
  for (const s of k?.segments ?? []) {
    const o = addr - s.vaddr;
    if (o >= 0n && o + BigInt(len) <= BigInt(s.bytes.length)) return s.bytes.subarray(Number(o), Number(o) + len);
  }
  return undefined;
}

/**
 * Addresses in [start, end) where the image at the end of the recording
 * holds a byte that differs from kcore_after. Bytes the image says do not
 * exist at the end (a removed trampoline: the kernel frees it without
 * clearing it) and bytes kcore_after does not hold are not compared.
 */
function diffWithAfter(
  image: CodeImage,
  after: KcoreDir,
  start: bigint,
  end: bigint,
): { compared: number; differ: bigint[] } {
  let compared = 0;
  const differ: bigint[] = [];
  for (let a = start; a < end; a++) {
    const want = afterByte(after, a);
    if (want === undefined) continue;
    const got = image.read(a, 1, CodeImage.END);
    if (got.length === 0) continue;
    compared++;
    if (got[0] !== want) differ.push(a);
  }
  return { compared, differ };
}

/** A copy of a perf.data file without the record at `off` (data size and feature offsets fixed up). */
function withoutRecord(file: Uint8Array, off: number): Uint8Array {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const len = dv.getUint16(off + 6, true);
  const dataOff = Number(dv.getBigUint64(40, true));
  const dataSize = Number(dv.getBigUint64(48, true));
  assert.ok(off >= dataOff && off + len <= dataOff + dataSize, 'record inside the data section');
  let features = 0;
  for (let i = 0; i < 32; i++) for (let b = dv.getUint8(72 + i); b; b &= b - 1) features++;
  const out = new Uint8Array(file.length - len);
  out.set(file.subarray(0, off));
  out.set(file.subarray(off + len), off);
  const ov = new DataView(out.buffer);
  ov.setBigUint64(48, BigInt(dataSize - len), true);
  const table = dataOff + dataSize - len;
  for (let i = 0; i < features; i++) {
    const at = table + 16 * i;
    const o = ov.getBigUint64(at, true);
    if (o > BigInt(off)) ov.setBigUint64(at, o - BigInt(len), true);
  }
  return out;
}

// ------------------------------------------------------------ tests
test('real-kernel fixture: present and small (≤ 8 MB)', (t) => {
  const why = present();
  if (why) return cannotCompare(t, why);
  const bytes = dirBytes(FIX);
  t.diagnostic(`fixture: ${(bytes / 1048576).toFixed(2)} MB`);
  assert.ok(bytes <= 8 * 1048576, `${bytes} bytes`);
});

for (const ph of PHASES) {
  test(`real-kernel ${ph.rec} (${ph.by}): perfpoke check says consistent`, (t) => {
    const why = present(ph.rec);
    if (why) return cannotCompare(t, why);
    const r = runCli(['check', '-i', join(FIX, ph.rec)]);
    t.diagnostic(r.stdout.trim());
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  test(`real-kernel ${ph.rec}: the image at the end equals ${ph.after} at every poked byte`, async (t) => {
    const why = present(ph.rec, ph.after);
    if (why) return cannotCompare(t, why);
    const m = await machine(ph.rec);
    const after = loadKcoreDir(join(FIX, ph.after));
    let compared = 0;
    const differ: bigint[] = [];
    for (const s of m.image.sites) {
      const d = diffWithAfter(m.image, after, s.start, s.end);
      compared += d.compared;
      differ.push(...d.differ);
    }
    t.diagnostic(`${m.pokes.length} pokes, ${m.image.sites.length} sites, ${compared} bytes compared with ${ph.after}`);
    assert.ok(m.pokes.length > 50 && compared > 100, 'the fixture holds real pokes');
    assert.deepEqual(differ.map(hex), []);
  });

  test(`real-kernel ${ph.rec}: dropping any one poke is found (check names its site, or the end differs from ${ph.after})`, async (t) => {
    const why = present(ph.rec, ph.after);
    if (why) return cannotCompare(t, why);
    const m = await machine(ph.rec);
    const after = loadKcoreDir(join(FIX, ph.after));
    const segs = m.kcore?.segments ?? [];
    let byCheck = 0;
    let byAfter = 0;
    let noops = 0;
    const missed: string[] = [];
    const removals: string[] = [];
    m.pokes.forEach((p, i) => {
      // A poke that writes the bytes already there (old == new, or a
      // trampoline re-created over the same bytes, which kcore already held
      // because the kernel reused the slot) changes nothing: nothing to find.
      const before = p.oldBytes.length ? p.oldBytes : baseBytes(m.kcore, p.addr, p.newBytes.length);
      if (before && before.length === p.newBytes.length && Buffer.compare(before, p.newBytes) === 0) {
        noops++;
        return;
      }
      const rest = m.pokes.filter((_, j) => j !== i);
      const img = CodeImage.build(segs, rest);
      const rep = checkImage(img, { ksymbols: m.ksymbols });
      const end = p.addr + BigInt(Math.max(p.oldBytes.length, p.newBytes.length));
      const named =
        rep.disagreements.some((d) => d.siteStart < end && p.addr < d.siteEnd) ||
        rep.badRemovals.some((b) => b.poke.addr >= p.addr && b.poke.addr < end + 4096n) ||
        rep.outsideMaps.some((o) => o.addr >= p.addr && o.addr < end + 4096n);
      if (named) byCheck++;
      else if (diffWithAfter(img, after, p.addr, end).differ.length > 0) byAfter++;
      else if (p.newBytes.length === 0) removals.push(`${hex(p.addr)} ${m.symbolizer.symOff(p.addr)}`);
      else
        missed.push(
          `#${i} ${hex(p.addr)} ${m.symbolizer.symOff(p.addr)} old ${p.oldBytes.length} new ${p.newBytes.length}`,
        );
    });
    t.diagnostic(
      `${m.pokes.length} pokes dropped one at a time: ${byCheck} named by check, ${byAfter} (the last at their site) seen against ${ph.after}, ${noops} rewrites of the bytes already there`,
    );
    if (removals.length) {
      // The kernel frees a trampoline without overwriting it, so its bytes
      // stay the same in kcore_after: only the KSYMBOL unregister record
      // could tell that a removal poke is missing.
      t.diagnostic(`not found: ${removals.length} dropped trampoline removals (new_len 0): ${removals.join('; ')}`);
    }
    assert.deepEqual(missed, []);
  });

  test(`real-kernel ${ph.rec}: perf 6.1 reads it without warnings and prints the same pokes as perfpoke pokes`, async (t) => {
    const why = present(ph.rec);
    if (why) return cannotCompare(t, why);
    const perf = perfScript(join(FIX, ph.rec));
    if (!perf) return cannotCompare(t, 'perf 6.1 (/usr/bin/perf) is not installed');
    assert.equal(perf.stderr, '', 'perf script warnings');
    const ours = perfpokePokes(ph.rec);
    const m = await machine(ph.rec);
    let theirs = perf.pokes;
    if (m.copies.length > 0) {
      // two text_poke events: perf reads each poke's inflated second copy at time 0 (sample_id is mid-record)
      // and lists it first; perfpoke folds those copies, so the rest must be perfpoke's list
      const zero = theirs.filter((p) => p.time === '0.000000');
      assert.equal(zero.length, m.copies.length, 'perf shows every folded copy at time 0');
      theirs = theirs.filter((p) => p.time !== '0.000000');
    }
    assert.equal(ours.length, theirs.length, 'same number of pokes');
    for (let i = 0; i < ours.length; i++) {
      const a = ours[i]!;
      const b: ScriptPoke = theirs[i]!;
      assert.equal(a.addr, hex(b.addr), `poke ${i}: address`);
      assert.equal(a.time, b.time, `poke ${i}: time`);
      assert.equal(a.old, b.old, `poke ${i} at ${a.addr}: old bytes`);
      assert.equal(a.new, b.new, `poke ${i} at ${a.addr}: new bytes`);
      // perf uses the kcore only when kcore_dir/modules lists every module map, else kallsyms alone
      // (src/machine/kernel-symbols.ts): the names must be perf's in both cases
      assert.equal(a.sym, b.sym, `poke ${i} at ${a.addr}: symbol`);
    }
    const kinds = new Map<string, number>();
    for (const p of ours) kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
    t.diagnostic(
      `${ours.length} pokes equal to perf's (time, address, bytes); kinds: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
  });
}

test('real-kernel perf-alone: every real poke gets a kind (jump label, static call, ftrace, kprobe, trampoline…)', async (t) => {
  const why = present('perf-alone');
  if (why) return cannotCompare(t, why);
  const ours = perfpokePokes('perf-alone');
  const kinds = new Set(ours.map((p) => p.kind));
  // What the workload did, and what each must look like (x86 encodings, independent of perfpoke):
  // the kmalloc tracepoint's static key: 2/5-byte nop <-> jmp
  assert.ok(
    ours.some((p) => p.kind === 'jump-label' && /^(66 90|0f 1f 44 00 00)$/.test(p.old) && /^(eb|e9) /.test(p.new)),
    'a jump label nop -> jmp',
  );
  // the function tracer on schedule: fentry nop5 <-> call at schedule+0 (endbr64 absent in this build)
  assert.ok(
    ours.some(
      (p) =>
        p.kind === 'ftrace' && p.sym.startsWith('schedule+') && p.old === '0f 1f 44 00 00' && p.new.startsWith('e8 '),
    ),
    'ftrace on schedule',
  );
  // the kprobe in do_sys_openat2's body: INT3 written
  assert.ok(
    ours.some((p) => p.kind === 'kprobe' && p.sym.startsWith('do_sys_openat2+') && p.new.startsWith('cc')),
    'kprobe int3',
  );
  // trampolines appear (old_len 0) and go (new_len 0)
  assert.ok(
    ours.some((p) => p.kind === 'trampoline-create' && p.old === ''),
    'trampoline created',
  );
  assert.ok(
    ours.some((p) => p.kind === 'trampoline-remove' && p.new === ''),
    'trampoline removed',
  );
  t.diagnostic(`kinds: ${[...kinds].sort().join(', ')}; 'other': ${ours.filter((p) => p.kind === 'other').length}`);
});

test('real-kernel perf-alone: perfpoke check names the site of a poke dropped from the file (and perf reads the file)', async (t) => {
  const why = present('perf-alone');
  if (why) return cannotCompare(t, why);
  const m = await machine('perf-alone');
  // one poke of each kind that is not the last at its site, so a later poke there disagrees
  const kinds = new Map<string, { addr: string; fileOffset: number }>();
  for (const p of perfpokePokes('perf-alone')) {
    const site = m.image.sites.find((s) => BigInt(`0x${p.addr}`) >= s.start && BigInt(`0x${p.addr}`) < s.end)!;
    const last = site.pokes[site.pokes.length - 1]!.poke.fileOffset === p.fileOffset;
    if (!last && !kinds.has(p.kind)) kinds.set(p.kind, p);
  }
  assert.ok(kinds.size >= 3, `kinds with a later poke at the site: ${[...kinds.keys()].join(', ')}`);
  const file = readFileSync(join(FIX, 'perf-alone', 'data'));
  const tmp = tempDir('perfpoke-real-');
  try {
    for (const [kind, p] of [...kinds].slice(0, 3)) {
      const dir = join(tmp, kind);
      cpSync(join(FIX, 'perf-alone', 'kcore_dir'), join(dir, 'kcore_dir'), { recursive: true });
      writeFileSync(join(dir, 'data'), withoutRecord(file, p.fileOffset));
      const perf = perfScript(dir);
      if (perf) {
        assert.equal(perf.stderr, '', 'perf reads the file with the record removed');
        assert.equal(perf.pokes.length, m.pokes.length - 1);
      }
      const c = runCli(['check', '-i', dir]);
      assert.equal(c.status, 1, `check after dropping the ${kind} poke at ${p.addr}: ${c.stdout}${c.stderr}`);
      assert.match(c.stdout, new RegExp(p.addr), `check names ${p.addr}`);
      t.diagnostic(
        `dropped ${kind} poke at ${p.addr}: ${c.stdout
          .split('\n')
          .find((l) => l.includes(p.addr))
          ?.trim()}`,
      );
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------ phase B: the same pokes twice
interface FilePoke {
  addr: bigint;
  old: string;
  new: string;
  /** sample_id time read at the end of the body (where the kernel wrote it). */
  time: bigint;
  /** bytes between body + sample_id and the record's end. */
  inflated: number;
}

/** TEXT_POKEs with their sample_id taken right after the body, not from the record's end. */
async function filePokes(path: string): Promise<FilePoke[]> {
  const f = await PerfFile.open(path);
  const layout = attrLayout(f.attrs[0]!.attr, f.le);
  const out: FilePoke[] = [];
  try {
    for await (const raw of f.records()) {
      if (raw.type !== 20) continue;
      const r = raw.decode();
      if (r.kind !== 'text_poke') continue;
      const bodyEnd = (8 + 8 + 4 + r.oldBytes.length + r.newBytes.length + 7) & ~7;
      const sid = decodeSampleId(
        new ByteReader(raw.bytes.subarray(bodyEnd, bodyEnd + layout.trailerSize), f.le),
        layout,
      );
      // the reader places the sample_id of Linux 6.1's inflated records the same way
      assert.equal(r.sampleId?.time, sid.time, `reader's time for the TEXT_POKE at 0x${raw.fileOffset.toString(16)}`);
      assert.equal(raw.timestamp(), sid.time);
      out.push({
        addr: r.addr,
        old: Buffer.from(r.oldBytes).toString('hex'),
        new: Buffer.from(r.newBytes).toString('hex'),
        time: sid.time ?? 0n,
        inflated: raw.size - bodyEnd - layout.trailerSize,
      });
    }
  } finally {
    await f.close();
  }
  return out;
}

/**
 * perf's pokes, in time order, aligned with perfpoke's: the offset k where
 * perf[k + i] has perfpoke[i]'s address and bytes for every i. Each
 * consumer's sample_id time is taken when the kernel writes its copy, so
 * the same poke has slightly different times in the two files.
 */
function align(perf: FilePoke[], ours: FilePoke[]): number {
  const same = (a: FilePoke, b: FilePoke): boolean => a.addr === b.addr && a.old === b.old && a.new === b.new;
  for (let k = 0; k + ours.length <= perf.length; k++) {
    if (ours.every((p, i) => same(perf[k + i]!, p))) return k;
  }
  return -1;
}
const byTime = (a: FilePoke, b: FilePoke): number => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0);

test('real-kernel phase B: perf and perfpoke, recording at the same time, hold the same pokes', async (t) => {
  const why = present('perf-kcore', 'perfpoke-kcore');
  if (why) return cannotCompare(t, why);
  const perf = (await filePokes(join(FIX, 'perf-kcore', 'data'))).sort(byTime);
  const ours = (await filePokes(join(FIX, 'perfpoke-kcore', 'data'))).sort(byTime);
  assert.ok(ours.length > 50, `${ours.length} pokes`);
  const k = align(perf, ours);
  assert.ok(k >= 0, "perfpoke's pokes (address, old and new bytes, in time order) are a run of perf's");
  let maxDelta = 0n;
  ours.forEach((p, i) => {
    const d = perf[k + i]!.time - p.time;
    assert.ok(d >= 0n && d < 10_000_000n, `poke ${i} at ${hex(p.addr)}: perf's copy written ${d} ns after perfpoke's`);
    if (d > maxDelta) maxDelta = d;
  });
  // perf ran longer (started first, stopped last): its other pokes lie outside perfpoke's window
  const before = perf.slice(0, k);
  const afterEnd = perf.slice(k + ours.length);
  assert.ok(before.every((p) => p.time < ours[0]!.time) && afterEnd.every((p) => p.time > ours[ours.length - 1]!.time));
  t.diagnostic(
    `${ours.length} pokes in both files (same order, addresses, bytes; perf's copy written ≤ ${maxDelta} ns later); perf has ${before.length} more before perfpoke started, ${afterEnd.length} after it stopped`,
  );
});

test('real-kernel phase B: Linux 6.1 inflates the records of all but the newest TEXT_POKE consumer; perf then reads time 0', async (t) => {
  const why = present('perf-kcore', 'perfpoke-kcore');
  if (why) return cannotCompare(t, why);
  const perf = await filePokes(join(FIX, 'perf-kcore', 'data'));
  const ours = await filePokes(join(FIX, 'perfpoke-kcore', 'data'));
  const inflated = perf.filter((p) => p.inflated > 0);
  // perfpoke's events were opened last, so the kernel wrote its records first and right
  assert.equal(ours.filter((p) => p.inflated !== 0).length, 0, 'perfpoke records are exact');
  assert.ok(inflated.length > 0, 'perf records written while perfpoke also listened are inflated');
  // exactly the pokes perfpoke saw are the inflated ones in perf's file
  perf.sort(byTime);
  ours.sort(byTime);
  const k = align(perf, ours);
  assert.ok(k >= 0);
  assert.deepEqual(
    perf.map((p, i) => (p.inflated > 0 ? i : -1)).filter((i) => i >= 0),
    ours.map((_, i) => k + i),
  );
  // perf 6.1 reads sample_id from the end of the record: those pokes print at time 0
  const s = perfScript(join(FIX, 'perf-kcore'));
  if (s) {
    assert.equal(s.stderr, '', 'perf reads the file without a warning');
    const zero = s.pokes.filter((p) => p.time === '0.000000');
    assert.equal(zero.length, inflated.length, 'perf prints time 0 for exactly the inflated records');
  }
  const c = runCli(['check', '-i', join(FIX, 'perf-kcore')]);
  t.diagnostic(
    `${inflated.length} of perf's ${perf.length} TEXT_POKE records are ${[...new Set(inflated.map((p) => p.inflated))].join('/')} bytes too long; perf prints them at time 0`,
  );
  t.diagnostic(`perfpoke check on perf's file: exit ${c.status}: ${c.stdout.split('\n')[0]}`);
  // perfpoke reads the sample_id right after an inflated record's body, so it keeps the real times
  assert.equal(c.status, 0, "check finds perf's phase B file consistent");
  assert.ok(
    inflated.every((p) => p.time > 0n),
    'inflated records keep their real time',
  );
  t.diagnostic(`perfpoke reads the ${inflated.length} inflated records at their real times (sample_id after the body)`);
});

test('real-kernel: the BPF fentry attach is a bpf-trampoline poke whose call target is named by its KSYMBOL (perf names it after a module symbol)', (t) => {
  const dir = join(FIX, 'perfpoke-kcore');
  if (!existsSync(join(dir, 'data'))) return cannotCompare(t, 'no perfpoke-kcore fixture');
  const r = runCli(['pokes', '-i', dir, '--json']);
  assert.equal(r.status, 0, r.stderr);
  const pokes = flatPokes(r.stdout);
  const attach = pokes.filter((p) => p.kind === 'bpf-trampoline');
  assert.equal(attach.length, 2, 'one attach (nop -> call) and one detach (call -> nop)');
  assert.ok(
    attach.some((p) => p.old === '0f 1f 44 00 00' && /<bpf_trampoline_\d+\+0x0>/.test(p.after)),
    'attach: call <bpf_trampoline_…>',
  );
  assert.ok(
    attach.some((p) => p.new === '0f 1f 44 00 00' && /<bpf_trampoline_\d+\+0x0>/.test(p.before)),
    'detach',
  );
  assert.ok(attach.every((p) => p.sym.startsWith('do_sys_openat2+')));
  assert.ok(
    pokes.some((p) => p.kind === 'ftrace' && p.sym.startsWith('schedule+')),
    'the function tracer stays ftrace',
  );
  t.diagnostic(`BPF attach/detach at ${attach[0]!.sym}: ${attach.map((p) => p.after).join(' / ')}`);
});
