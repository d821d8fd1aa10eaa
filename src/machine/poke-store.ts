/**
 * Text pokes as columns: typed arrays for time, cpu, address, file offset,
 * misc and id, and offsets into one byte buffer for the old and new bytes.
 *
 * A million pokes as objects (two bigints, two byte arrays, a placed-poke
 * object beside each) cost ~430 MB and most of `check`'s time in the garbage
 * collector; as columns they cost ~34 bytes each (plus their bytes, short
 * ones stored once) and no allocation. 64-bit values are kept as two u32
 * halves, so reading a record allocates no bigint; `poke(i)` builds the plain
 * Poke object (poke.ts) on demand, once per index, for the code that wants
 * objects (formatting, the decoder, tests).
 */
import type { Poke } from './poke.js';

const TWO32 = 4294967296;
/** Interning table size: at most half full (65 536 distinct short strings, then new ones are just stored). */
const INTERN_SLOTS = 1 << 17;

type Column = Float64Array | Uint32Array | Uint16Array | Uint8Array | Int16Array;

/** Grow a typed array to hold at least n elements (doubling: amortized O(1) per append). */
function grow<T extends Column>(a: T, n: number): T {
  if (n <= a.length) return a;
  const b = new (a.constructor as new (len: number) => T)(Math.max(n, a.length * 2));
  b.set(a);
  return b;
}

function hiOf(v: bigint): number {
  return Number((v >> 32n) & 0xffffffffn);
}
function loOf(v: bigint): number {
  return Number(v & 0xffffffffn);
}
export function u64(hi: number, lo: number): bigint {
  return hi === 0 ? BigInt(lo) : (BigInt(hi) << 32n) | BigInt(lo);
}

export class PokeStore {
  /** Number of pokes. */
  length = 0;
  timeHi = new Uint32Array(1024);
  timeLo = new Uint32Array(1024);
  addrHi = new Uint32Array(1024);
  addrLo = new Uint32Array(1024);
  /*
   * The columns below start at the narrowest type their usual values fit
   * (cpus below 32 768, files below 4 GiB, short pokes, a few ids) and are
   * widened, once, by the first value that does not fit (widen): ~18
   * bytes a poke less than the widest types.
   */
  /** cpu as read (u32), -1 when absent. */
  cpu: Int16Array | Float64Array = new Int16Array(1024);
  fileOffset: Uint32Array | Float64Array = new Uint32Array(1024);
  misc: Uint8Array | Uint16Array = new Uint8Array(1024);
  /** The poke's sample id as an index into the file's few ids (idHis, idLos), plus one; 0: none. */
  idIndex: Uint8Array | Uint16Array | Uint32Array = new Uint8Array(1024);
  private readonly idHis: number[] = [];
  private readonly idLos: number[] = [];
  private readonly idIndexOf = new Map<number, Map<number, number>>();
  oldOff = new Uint32Array(1024);
  /** TEXT_POKE's lengths are u16. */
  oldLen: Uint8Array | Uint16Array = new Uint8Array(1024);
  newOff = new Uint32Array(1024);
  newLen: Uint8Array | Uint16Array = new Uint8Array(1024);
  /** The pokes' bytes; offsets above point into it. Short strings are stored once (interned). */
  bytes = new Uint8Array(1 << 16);
  private used = 0;
  /** Interned short strings: an open-addressing table of (offset + 1, length) slots, hashed on the bytes. */
  private slotAt = new Int32Array(1024);
  private slotLen = new Uint8Array(1024);
  private interned = 0;
  /** poke(i)'s objects, so each index gives one object (identity matters to callers that key maps by poke). */
  private objects: (Poke | undefined)[] | undefined;

  /** A store holding these objects: poke(i) returns pokes[i] itself. */
  static of(pokes: Iterable<Poke>): PokeStore {
    const s = new PokeStore();
    const objs: Poke[] = [];
    for (const p of pokes) {
      s.add(p);
      objs.push(p);
    }
    s.objects = objs;
    return s;
  }

  /** How many pokes fit before the columns grow. */
  get capacity(): number {
    return this.timeHi.length;
  }

  /** Room for at least n pokes (a caller that can estimate the count saves the doublings). */
  reserve(n: number): void {
    if (n <= this.timeHi.length) return;
    this.timeHi = grow(this.timeHi, n);
    this.timeLo = grow(this.timeLo, n);
    this.addrHi = grow(this.addrHi, n);
    this.addrLo = grow(this.addrLo, n);
    this.cpu = grow(this.cpu, n);
    this.fileOffset = grow(this.fileOffset, n);
    this.misc = grow(this.misc, n);
    this.idIndex = grow(this.idIndex, n);
    this.oldOff = grow(this.oldOff, n);
    this.oldLen = grow(this.oldLen, n);
    this.newOff = grow(this.newOff, n);
    this.newLen = grow(this.newLen, n);
  }

  /** Offset in `bytes` of a copy of src[from, from+n); strings of up to 6 bytes (jump labels, calls) stored once. */
  private take(src: Uint8Array, from: number, n: number): number {
    let slot = -1;
    if (n <= 6) {
      slot = this.slotFor(src, from, n);
      const at = this.slotAt[slot]! - 1;
      if (at >= 0) return at;
    }
    if (this.used + n > this.bytes.length) {
      const b = new Uint8Array(Math.max(this.bytes.length * 2, this.used + n));
      b.set(this.bytes.subarray(0, this.used));
      this.bytes = b;
    }
    const at = this.used;
    const bytes = this.bytes;
    if (n > 16) bytes.set(src.subarray(from, from + n), at);
    else for (let j = 0; j < n; j++) bytes[at + j] = src[from + j]!;
    this.used += n;
    if (slot >= 0 && this.interned < INTERN_SLOTS / 2) {
      this.slotAt[slot] = at + 1;
      this.slotLen[slot] = n;
      this.interned++;
      // the table starts small (its size follows the input) and doubles at half full
      if (2 * this.interned > this.slotAt.length && this.slotAt.length < INTERN_SLOTS) this.rehash();
    }
    return at;
  }

  /** The slot holding src[from, from+n) in the interning table, or the empty slot where it goes. */
  private slotFor(src: Uint8Array, from: number, n: number): number {
    const mask = this.slotAt.length - 1;
    let h = n;
    for (let i = 0; i < n; i++) h = Math.imul(h ^ src[from + i]!, 0x9e3779b1);
    let slot = (h >>> 12) & mask;
    const bytes = this.bytes;
    for (;;) {
      const at = this.slotAt[slot]! - 1;
      if (at < 0) return slot;
      if (this.slotLen[slot] === n) {
        let j = 0;
        while (j < n && bytes[at + j] === src[from + j]) j++;
        if (j === n) return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  private rehash(): void {
    const oldAt = this.slotAt;
    const oldLen = this.slotLen;
    this.slotAt = new Int32Array(oldAt.length * 2);
    this.slotLen = new Uint8Array(oldAt.length * 2);
    for (let k = 0; k < oldAt.length; k++) {
      const at = oldAt[k]! - 1;
      if (at < 0) continue;
      const slot = this.slotFor(this.bytes, at, oldLen[k]!);
      this.slotAt[slot] = at + 1;
      this.slotLen[slot] = oldLen[k]!;
    }
  }

  /**
   * Append a poke from its parts: 64-bit values as (hi, lo) halves; old and
   * new bytes copied from src. Returns its index. (Plain numbers, no option
   * object: this runs once per TEXT_POKE record.)
   */
  push(
    timeHi: number,
    timeLo: number,
    cpu: number,
    addrHi: number,
    addrLo: number,
    src: Uint8Array,
    oldFrom: number,
    oldLen: number,
    newFrom: number,
    newLen: number,
    fileOffset: number,
    misc: number,
    hasId: boolean,
    idHi: number,
    idLo: number,
  ): number {
    const i = this.length;
    this.reserve(i + 1);
    if (cpu > 0x7fff && this.cpu instanceof Int16Array) this.cpu = Float64Array.from(this.cpu);
    if (fileOffset > 0xffffffff && this.fileOffset instanceof Uint32Array)
      this.fileOffset = Float64Array.from(this.fileOffset);
    if (misc > 0xff && this.misc instanceof Uint8Array) this.misc = Uint16Array.from(this.misc);
    this.widenLengths(oldLen, newLen);
    this.timeHi[i] = timeHi;
    this.timeLo[i] = timeLo;
    this.cpu[i] = cpu;
    this.addrHi[i] = addrHi;
    this.addrLo[i] = addrLo;
    this.oldOff[i] = this.take(src, oldFrom, oldLen);
    this.oldLen[i] = oldLen;
    this.newOff[i] = this.take(src, newFrom, newLen);
    this.newLen[i] = newLen;
    this.fileOffset[i] = fileOffset;
    this.misc[i] = misc;
    // idSlot may widen the column: take its answer before naming the column to write to
    const id = hasId ? this.idSlot(idHi, idLo) : 0;
    this.idIndex[i] = id;
    this.length = i + 1;
    return i;
  }

  /** Widen the length columns to u16 for a poke's lengths past 255. */
  private widenLengths(oldLen: number, newLen: number): void {
    if ((oldLen > 0xff || newLen > 0xff) && this.oldLen instanceof Uint8Array) {
      this.oldLen = Uint16Array.from(this.oldLen);
      this.newLen = Uint16Array.from(this.newLen);
    }
  }

  /** The index (plus one) of id (hi, lo) among the ids seen: a file has one id per event and CPU. */
  private idSlot(hi: number, lo: number): number {
    let byLo = this.idIndexOf.get(hi);
    if (byLo === undefined) {
      byLo = new Map();
      this.idIndexOf.set(hi, byLo);
    }
    let k = byLo.get(lo);
    if (k === undefined) {
      this.idHis.push(hi);
      this.idLos.push(lo);
      k = this.idHis.length;
      byLo.set(lo, k);
      if (k > 0xff && this.idIndex instanceof Uint8Array) this.idIndex = Uint16Array.from(this.idIndex);
      if (k > 0xffff && this.idIndex instanceof Uint16Array) this.idIndex = Uint32Array.from(this.idIndex);
    }
    return k;
  }

  /** Offsets of byte arrays add() copied already: a caller's shared array is stored once. */
  private readonly copied = new WeakMap<Uint8Array, number>();

  private takeArray(b: Uint8Array): number {
    if (b.length <= 6) return this.take(b, 0, b.length);
    const hit = this.copied.get(b);
    if (hit !== undefined) return hit;
    const at = this.take(b, 0, b.length);
    this.copied.set(b, at);
    return at;
  }

  /** Append a Poke object (its bytes are copied). */
  add(p: Poke): number {
    if (p.oldBytes.length > 0xffff || p.newBytes.length > 0xffff)
      throw new RangeError(`a poke's old and new bytes are at most 65535 long (TEXT_POKE's u16 lengths)`);
    const i = this.push(
      hiOf(p.time),
      loOf(p.time),
      p.cpu,
      hiOf(p.addr),
      loOf(p.addr),
      p.oldBytes,
      0,
      0,
      0,
      0,
      p.fileOffset,
      p.misc,
      p.id !== undefined,
      p.id === undefined ? 0 : hiOf(p.id),
      p.id === undefined ? 0 : loOf(p.id),
    );
    // the bytes come from the caller's arrays, which may be shared between pokes
    this.widenLengths(p.oldBytes.length, p.newBytes.length);
    this.oldOff[i] = this.takeArray(p.oldBytes);
    this.oldLen[i] = p.oldBytes.length;
    this.newOff[i] = this.takeArray(p.newBytes);
    this.newLen[i] = p.newBytes.length;
    return i;
  }

  time(i: number): bigint {
    return u64(this.timeHi[i]!, this.timeLo[i]!);
  }
  /** The time as a double (rounded above 2^53, order kept). */
  timeF(i: number): number {
    return this.timeHi[i]! * TWO32 + this.timeLo[i]!;
  }
  addr(i: number): bigint {
    return u64(this.addrHi[i]!, this.addrLo[i]!);
  }
  /** -1, 0, 1 as poke i's time compares with poke j's. */
  cmpTime(i: number, j: number): number {
    const a = this.timeHi[i]!;
    const b = this.timeHi[j]!;
    if (a !== b) return a < b ? -1 : 1;
    const c = this.timeLo[i]!;
    const d = this.timeLo[j]!;
    return c < d ? -1 : c > d ? 1 : 0;
  }
  /** max(old_len, new_len): how many bytes from addr the poke touches. */
  span(i: number): number {
    return Math.max(this.oldLen[i]!, this.newLen[i]!);
  }
  oldBytes(i: number): Uint8Array {
    const o = this.oldOff[i]!;
    return this.bytes.subarray(o, o + this.oldLen[i]!);
  }
  newBytes(i: number): Uint8Array {
    const o = this.newOff[i]!;
    return this.bytes.subarray(o, o + this.newLen[i]!);
  }

  /** Poke i's sample id, if it has one. */
  idOf(i: number): bigint | undefined {
    const k = this.idIndex[i]!;
    return k === 0 ? undefined : u64(this.idHis[k - 1]!, this.idLos[k - 1]!);
  }

  /** Poke i as an object (the same object on every call). Its byte arrays are shared: read-only. */
  poke(i: number): Poke {
    this.objects ??= [];
    const p = this.peek(i);
    this.objects[i] = p;
    return p;
  }

  /**
   * Poke i as an object without keeping it: poke(i)'s object when one was
   * made, else a fresh one. For a pass over every poke in bounded memory.
   */
  peek(i: number): Poke {
    const hit = this.objects?.[i];
    if (hit) return hit;
    return {
      time: this.time(i),
      cpu: this.cpu[i]!,
      addr: this.addr(i),
      oldBytes: this.oldBytes(i),
      newBytes: this.newBytes(i),
      fileOffset: this.fileOffset[i]!,
      misc: this.misc[i]!,
      id: this.idOf(i),
    };
  }

  /** Every poke as an object, in store order. */
  toArray(): Poke[] {
    const out: Poke[] = [];
    for (let i = 0; i < this.length; i++) out.push(this.poke(i));
    return out;
  }

  /** The latest time of any poke (0n when empty). */
  maxTime(): bigint {
    let best = -1;
    for (let i = 0; i < this.length; i++) if (best < 0 || this.cmpTime(i, best) > 0) best = i;
    return best < 0 ? 0n : this.time(best);
  }
}
