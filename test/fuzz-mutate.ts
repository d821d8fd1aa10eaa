/**
 * Mutations of a perf.data file for the fuzzer (test/fuzz*.test.ts, npm run fuzz).
 * Each mutant is a pure function of (fixture bytes, seed, index), so a failure
 * report names everything needed to rebuild it (`mutant(bytes, seed, index)`).
 *
 * Besides blind truncation and bit flips, the mutators aim at the fields a
 * reader trusts: the header's section offsets and sizes, the feature table,
 * record sizes, and count-like u32/u64 fields inside records (set to huge
 * values), which is where a reader allocates or loops by what the file says.
 */

/** The reader window the fuzzer asks for (where the API lets it). */
export const FUZZ_WINDOW = 1 << 16;

/**
 * Buffers whose size does not depend on the file, left out of the allocation
 * check: PerfFile's default 4 MiB window (loadMachine takes no window option),
 * stats' 1 MiB reads (with 64 KiB in front for a record carried over,
 * src/session/fast-count-chunks.ts), and stats' 256 KiB
 * table of sample ids below 2^16 (src/session/fast-count.ts). Every other
 * allocation must fit in the file's size (or the fuzzer's 64 KiB window).
 */
export const FIXED_BUFFERS: ReadonlySet<number> = new Set([4 << 20, 1 << 20, (1 << 20) + (1 << 16), (1 << 16) * 4]);

/** mulberry32: small, fast, good enough to pick mutations reproducibly. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)] as T;

/** Values that break sizes and counts: 0, off-by-one, sign bit, all ones, just past the file. */
function nasty(r: Rand, fileSize: number): bigint {
  return pick(r, [
    0n,
    1n,
    7n,
    8n,
    0x7fffn,
    0xffffn,
    0x7fffffffn,
    0x80000000n,
    0xffffffffn,
    0x100000000n,
    0x7fffffffffffffffn,
    0xffffffffffffffffn,
    BigInt(fileSize),
    BigInt(fileSize + 1),
    BigInt(Math.max(0, fileSize - 1)),
    BigInt(int(r, fileSize * 2 + 1)),
  ]);
}

function put(b: Uint8Array, at: number, width: 2 | 4 | 8, v: bigint, le: boolean): void {
  if (at < 0 || at + width > b.length) return;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (width === 2) dv.setUint16(at, Number(v & 0xffffn), le);
  else if (width === 4) dv.setUint32(at, Number(v & 0xffffffffn), le);
  else dv.setBigUint64(at, BigInt.asUintN(64, v), le);
}

interface Layout {
  le: boolean;
  pipe: boolean;
  /** Record starts (file offsets) found by walking the data section (or the pipe stream). */
  records: number[];
  /** Offsets of the header's u64 offset/size fields and of the feature table's entries. */
  sectionFields: number[];
}

/** A walk independent of the library's reader (so a reader bug cannot hide a target). */
function layoutOf(b: Uint8Array): Layout {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const magic = b.length >= 8 ? dv.getBigUint64(0, true) : 0n;
  const le = magic === 0x32454c4946524550n; // "PERFILE2" read little-endian
  const out: Layout = { le, pipe: false, records: [], sectionFields: [] };
  if (b.length < 16) return out;
  const hsize = Number(dv.getBigUint64(8, le));
  out.pipe = hsize === 16;
  let start = 16;
  let end = b.length;
  if (!out.pipe && b.length >= 104) {
    for (let at = 8; at < 72; at += 8) out.sectionFields.push(at);
    start = Number(dv.getBigUint64(40, le));
    end = Math.min(b.length, start + Number(dv.getBigUint64(48, le)));
    // feature table: 16 bytes per set bit of the 256-bit bitmap at 72, right after the data section
    let bits = 0;
    for (let i = 72; i < 104; i++) for (let v = b[i] ?? 0; v; v &= v - 1) bits++;
    for (let k = 0; k < bits * 2; k++) out.sectionFields.push(end + 8 * k);
  }
  for (let p = start; p + 8 <= end && out.records.length < 100_000; ) {
    const size = dv.getUint16(p + 6, le);
    out.records.push(p);
    if (size < 8) break;
    p += size;
  }
  return out;
}

export const MUTATORS = [
  'truncate',
  'bit-flips',
  'byte-runs',
  'record-size',
  'record-field-huge',
  'section-field',
  'record-type',
  'splice',
] as const;
export type Mutator = (typeof MUTATORS)[number];

export interface Mutant {
  bytes: Uint8Array;
  mutator: Mutator;
  /** What was changed, for the failure report. */
  what: string;
}

/** Mutant number `index` of `src` under `seed`: one to three mutations stacked. */
export function mutant(src: Uint8Array, seed: number, index: number): Mutant {
  const r = rng((seed * 0x9e3779b1) ^ (index * 0x85ebca77));
  let b: Uint8Array = src.slice();
  const steps = 1 + (r() < 0.3 ? int(r, 3) : 0);
  const whats: string[] = [];
  let first: Mutator | undefined;
  for (let s = 0; s < steps; s++) {
    const m = pick(r, MUTATORS);
    first ??= m;
    const [nb, what] = apply(m, b, r);
    b = nb;
    whats.push(`${m}: ${what}`);
  }
  return { bytes: b, mutator: first ?? 'truncate', what: whats.join('; ') };
}

function apply(m: Mutator, b: Uint8Array, r: Rand): [Uint8Array, string] {
  const n = b.length;
  if (n === 0) return [b, 'empty'];
  const lay = layoutOf(b);
  const rec = lay.records.length ? pick(r, lay.records) : int(r, n);
  switch (m) {
    case 'truncate': {
      // bias towards structure boundaries: inside the header, inside a record, anywhere
      const at = pick(r, [int(r, Math.min(n, 256)), rec + int(r, 16), int(r, n)]);
      const len = Math.max(0, Math.min(n - 1, at));
      return [b.subarray(0, len).slice(), `to ${len} bytes`];
    }
    case 'bit-flips': {
      const k = 1 + int(r, 8);
      const at: number[] = [];
      for (let i = 0; i < k; i++) {
        const p = int(r, n);
        b[p] = (b[p] ?? 0) ^ (1 << int(r, 8));
        at.push(p);
      }
      return [b, `at ${at.map((p) => `0x${p.toString(16)}`).join(',')}`];
    }
    case 'byte-runs': {
      const p = int(r, n);
      const len = 1 + int(r, 16);
      const v = pick(r, [0, 0xff, 0x7f, 0x80, int(r, 256)]);
      b.fill(v, p, Math.min(n, p + len));
      return [b, `${len}×0x${v.toString(16)} at 0x${p.toString(16)}`];
    }
    case 'record-size': {
      const v = pick(r, [0n, 1n, 7n, 8n, 9n, 0xfff8n, 0xffffn, BigInt(int(r, 0x10000))]);
      put(b, rec + 6, 2, v, lay.le);
      return [b, `size of record at 0x${rec.toString(16)} = ${v}`];
    }
    case 'record-field-huge': {
      // a u32 or u64 inside a record body: nr/len/count fields live there
      const off = rec + 8 + 4 * int(r, 16);
      const width = pick(r, [4, 8] as const);
      const v = nasty(r, n);
      put(b, off, width, v, lay.le);
      return [b, `u${width * 8} at 0x${off.toString(16)} = 0x${v.toString(16)}`];
    }
    case 'section-field': {
      if (!lay.sectionFields.length) return apply('record-field-huge', b, r);
      const off = pick(r, lay.sectionFields);
      const v = nasty(r, n);
      put(b, off, 8, v, lay.le);
      return [b, `u64 at 0x${off.toString(16)} = 0x${v.toString(16)}`];
    }
    case 'record-type': {
      const v = BigInt(pick(r, [0, 1, 9, 11, 19, 20, 64, 65, 66, 67, 68, 69, 70, 71, 72, 79, 80, 81, 82, 200, 0xffff]));
      put(b, rec, 4, v, lay.le);
      return [b, `type of record at 0x${rec.toString(16)} = ${v}`];
    }
    case 'splice': {
      // duplicate or drop a chunk (shifts every later offset)
      const p = int(r, n);
      const len = 1 + int(r, Math.min(512, n - p));
      if (r() < 0.5) {
        const out = new Uint8Array(n - len);
        out.set(b.subarray(0, p));
        out.set(b.subarray(p + len), p);
        return [out, `dropped ${len} bytes at 0x${p.toString(16)}`];
      }
      const out = new Uint8Array(n + len);
      out.set(b.subarray(0, p + len));
      out.set(b.subarray(p), p + len);
      return [out, `duplicated ${len} bytes at 0x${p.toString(16)}`];
    }
  }
}
