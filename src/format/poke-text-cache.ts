/**
 * What `pokes` says about a poke besides its time, cpu and consistency,
 * made once per (address, old bytes, new bytes) and reused.
 *
 * A million pokes flip a few thousand sites between the same two or three
 * byte strings, and a line's address, sym+off, kind and instructions (branch
 * targets named) depend only on the poke's address and bytes and on the
 * symbols at that point of the recording, which change only at a KSYMBOL or
 * when perf loads kcore_dir (NamingEpochs). So the made values are kept in a
 * hash table on (address, bytes), emptied when the names may change and when
 * it holds MAX_ENTRIES (memory stays bounded whatever the input). Keys are
 * the bytes' places in the store's byte buffer: no copy, no object per entry.
 */
import type { CodeImage } from '../machine/code-image.js';
import type { Poke } from '../machine/poke.js';
import { NamingEpochs, type Symbolizer } from '../machine/symbolizer.js';

/** Entries kept at most (then the table starts over): ~200 bytes each with a line's text. */
export const MAX_ENTRIES = 1 << 16;
/** Key fields per entry: address hi and lo, old bytes' offset and length, new bytes' offset and length. */
const K = 6;

/** a[ao, ao+al) and b[bo, bo+bl) hold the same bytes. */
function sameBytes(a: Uint8Array, ao: number, al: number, b: Uint8Array, bo: number, bl: number): boolean {
  if (al !== bl) return false;
  if (a === b && ao === bo) return true;
  for (let j = 0; j < al; j++) if (a[ao + j] !== b[bo + j]) return false;
  return true;
}

function mixBytes(h: number, b: Uint8Array, off: number, len: number): number {
  h = Math.imul(h ^ len, 0x9e3779b1);
  for (let j = 0; j < len; j++) h = Math.imul(h ^ b[off + j]!, 0x9e3779b1);
  return h;
}

function hashOf(hi: number, lo: number, a: Uint8Array, ao: number, al: number, b: Uint8Array, bo: number, bl: number) {
  let h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
  h = mixBytes(mixBytes(h, a, ao, al), b, bo, bl);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 13);
}

export class PokeTextCache<V> {
  private readonly epochs: NamingEpochs;
  /** For copies, whose points need not follow the walk's order. */
  private readonly copyEpochs: NamingEpochs;
  private epoch = -1;
  private lastSeq = -1;
  /** Open addressing: entry + 1 per slot, 0 = empty; at most half full. */
  private slots = new Int32Array(1 << 10);
  private keys = new Uint32Array(K * 256);
  private values: V[] = [];

  constructor(
    private readonly image: CodeImage,
    symbolizer: Symbolizer,
    private readonly make: (p: Poke) => V,
    private readonly maxEntries = MAX_ENTRIES,
  ) {
    this.epochs = new NamingEpochs(symbolizer);
    this.copyEpochs = new NamingEpochs(symbolizer);
  }

  /** The value for the seq-th applied poke (`p`: that poke, when the caller has it). Cheapest in apply order. */
  applied(seq: number, p?: Poke): V {
    const st = this.image.store;
    const i = this.image.order[seq]!;
    // a settled walk keeps its number only for the points after it
    const back = seq < this.lastSeq;
    this.lastSeq = seq;
    if (back || !this.epochs.settled) {
      const e = this.epochs.at({ time: st.time(i), fileOffset: st.fileOffset[i]! });
      if (e !== this.epoch) {
        // the names may differ from here on
        this.epoch = e;
        this.clear();
      }
    }
    const b = st.bytes;
    const hi = st.addrHi[i]!;
    const lo = st.addrLo[i]!;
    const oo = st.oldOff[i]!;
    const ol = st.oldLen[i]!;
    const no = st.newOff[i]!;
    const nl = st.newLen[i]!;
    const x = this.find(hashOf(hi, lo, b, oo, ol, b, no, nl), hi, lo, b, oo, ol, b, no, nl);
    const e = this.slots[x]! - 1;
    if (e >= 0) return this.values[e]!;
    const v = this.make(p ?? st.peek(i));
    if (this.values.length >= this.maxEntries) {
      this.clear();
      this.insert(hashOf(hi, lo, b, oo, ol, b, no, nl), hi, lo, oo, ol, no, nl, v);
    } else this.put(x, hi, lo, oo, ol, no, nl, v);
    return v;
  }

  /**
   * The value for `copy`, an extra copy (double-delivery.ts) of an applied
   * poke: the kept one when the copy has the same address and bytes and
   * falls where the names are the same, else made afresh (and not kept).
   */
  copyOf(copy: Poke): V {
    if (this.copyEpochs.at({ time: copy.time, fileOffset: copy.fileOffset }) === this.epoch) {
      const hi = Number((copy.addr >> 32n) & 0xffffffffn);
      const lo = Number(copy.addr & 0xffffffffn);
      const o = copy.oldBytes;
      const n = copy.newBytes;
      const x = this.find(hashOf(hi, lo, o, 0, o.length, n, 0, n.length), hi, lo, o, 0, o.length, n, 0, n.length);
      const e = this.slots[x]! - 1;
      if (e >= 0) return this.values[e]!;
    }
    return this.make(copy);
  }

  private clear(): void {
    if (this.values.length === 0) return;
    this.slots.fill(0);
    this.values = [];
  }

  /** The slot holding (hi, lo, old, new), or the empty slot where it goes. */
  private find(
    h: number,
    hi: number,
    lo: number,
    a: Uint8Array,
    ao: number,
    al: number,
    b: Uint8Array,
    bo: number,
    bl: number,
  ): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    const keys = this.keys;
    const bytes = this.image.store.bytes;
    for (let x = (h >>> 4) & mask; ; x = (x + 1) & mask) {
      const e = slots[x]! - 1;
      if (e < 0) return x;
      const k = e * K;
      if (
        keys[k + 1] === lo &&
        keys[k] === hi &&
        sameBytes(bytes, keys[k + 2]!, keys[k + 3]!, a, ao, al) &&
        sameBytes(bytes, keys[k + 4]!, keys[k + 5]!, b, bo, bl)
      )
        return x;
    }
  }

  private insert(h: number, hi: number, lo: number, oo: number, ol: number, no: number, nl: number, v: V): void {
    const b = this.image.store.bytes;
    this.put(this.find(h, hi, lo, b, oo, ol, b, no, nl), hi, lo, oo, ol, no, nl, v);
  }

  private put(x: number, hi: number, lo: number, oo: number, ol: number, no: number, nl: number, v: V): void {
    const e = this.values.length;
    if (this.keys.length < (e + 1) * K) {
      const k = new Uint32Array(this.keys.length * 2);
      k.set(this.keys);
      this.keys = k;
    }
    const k = e * K;
    this.keys.set([hi, lo, oo, ol, no, nl], k);
    this.values.push(v);
    this.slots[x] = e + 1;
    if (2 * this.values.length > this.slots.length) this.rehash();
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    const keys = this.keys;
    const b = this.image.store.bytes;
    for (let e = 0; e < this.values.length; e++) {
      const k = e * K;
      const h = hashOf(keys[k]!, keys[k + 1]!, b, keys[k + 2]!, keys[k + 3]!, b, keys[k + 4]!, keys[k + 5]!);
      const mask = this.slots.length - 1;
      let x = (h >>> 4) & mask;
      while (this.slots[x] !== 0) x = (x + 1) & mask;
      this.slots[x] = e + 1;
    }
  }
}
