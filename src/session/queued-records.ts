/**
 * The records waiting in the session's reorder queue, held as numbers: a
 * handle per record indexing typed arrays (which buffer, where in it, how
 * long, its file offset, layout and COMPRESSED type), with the bytes in 1 MiB
 * slabs (copies of the reader's window) or in the unpacker's own buffers
 * (records from COMPRESSED). A queued record waits a round or more, so it
 * outlives young-generation GCs: as objects (a RawRecord and a view per
 * record) every one was copied and promoted, which cost `script` a quarter of
 * its time on big files. The RawRecord is made again when the record leaves
 * the queue, and dies young.
 */
import type { AttrLayout } from '../perfdata/layout.js';
import { RawRecord } from '../perfdata/raw-record.js';
import { copyView, viewOf } from '../io/byte-copy.js';

const SLAB = 1 << 20;
/** Records larger than this, or with a payload (auxData), are kept as copied objects. */
const MAX_SLAB_RECORD = 65536;
const MAX_SPARE_SLABS = 4;
/**
 * Records `take(h, true)` hands out before it makes the first one again: more
 * than the session ever has out at once (a batch being consumed and the rest
 * of a release waiting, RELEASE_BATCH each).
 */
export const REUSE_RING = 4096;

export class QueuedRecords {
  // per handle
  private bufOf = new Int32Array(1024);
  private offOf = new Int32Array(1024);
  private lenOf = new Int32Array(1024);
  private fileOffOf = new Float64Array(1024);
  private layoutOf = new Int32Array(1024);
  private cinOf = new Int32Array(1024);
  /** The objects take(h, true) hands out, in turn. */
  private readonly ring: RawRecord[] = [];
  private ringAt = 0;
  /** Handles of records kept as objects (bufOf -1). */
  private readonly objs: (RawRecord | undefined)[] = [];
  /** Unused handles. */
  private free = new Int32Array(1024);
  private freeTop = 0;
  private next = 0;

  // per buffer id
  private readonly bufs: (Uint8Array | undefined)[] = [];
  private readonly refs: number[] = [];
  private readonly freeBufs: number[] = [];
  /** Emptied slabs, for reuse (never an unpacker's buffer: records not queued may still point into it). */
  private readonly spareSlabs: Uint8Array[] = [];
  private readonly slabs = new WeakSet<Uint8Array>();

  /** The slab copies go into, and the unpacker's buffer seen last: released once empty and replaced. */
  private slab = -1;
  private slabPos = 0;
  /** The current slab, and the last source array, as DataViews: records are copied four bytes a step. */
  private slabView: DataView | undefined;
  private srcArray: Uint8Array | undefined;
  private srcView: DataView | undefined;
  private unpacked = -1;
  private unpackedBuffer: ArrayBufferLike | undefined;

  private readonly layouts: (AttrLayout | undefined)[] = [];
  private lastLayout: AttrLayout | undefined;
  private lastLayoutId = -1;

  constructor(
    private readonly le: boolean,
    private readonly textPokeAbi: 'final' | 'rfc',
  ) {}

  /** Queue a record that must outlive the reader's window; returns its handle. */
  add(raw: RawRecord): number {
    const n = raw.length;
    if (raw.auxData || n > MAX_SLAB_RECORD || raw.le !== this.le || raw.textPokeAbi !== this.textPokeAbi) {
      const h = this.handle();
      this.bufOf[h] = -1;
      // unpacked COMPRESSED contents have a buffer of their own, never reused: no copy needed
      this.objs[h] = raw.compressedIn !== 0 ? raw : raw.copy();
      return h;
    }
    if (raw.compressedIn === 0) return this.addBytes(raw.buf, raw.off, n, raw.fileOffset, raw.layout);
    // unpacked COMPRESSED contents have a buffer of their own, never reused: kept, not copied
    const src = raw.buf;
    const ab = src.buffer;
    if (ab !== this.unpackedBuffer) {
      this.retire(this.unpacked);
      this.unpacked = this.newBuffer(new Uint8Array(ab));
      this.unpackedBuffer = ab;
    }
    const h = this.handle();
    this.keep(h, this.unpacked, src.byteOffset + raw.off, n, raw.fileOffset, raw.layout);
    this.cinOf[h] = raw.compressedIn;
    return h;
  }

  /**
   * Queue the record src[from, from + n) read at `fileOffset` (the file's byte
   * order and text-poke ABI, at most MAX_SLAB_RECORD bytes, no payload): a copy
   * into the slab, with no RawRecord made for it (the session's window router).
   */
  addBytes(src: Uint8Array, from: number, n: number, fileOffset: number, layout: AttrLayout | undefined): number {
    if (this.slab < 0 || this.slabPos + n > SLAB) {
      this.retire(this.slab);
      const slab = this.spareSlabs.pop() ?? this.newSlab();
      this.slab = this.newBuffer(slab);
      this.slabView = viewOf(slab);
      this.slabPos = 0;
    }
    const off = this.slabPos;
    copyBytes(this.bufs[this.slab]!, this.slabView!, off, src, this.viewOfSource(src), from, n);
    this.slabPos += (n + 7) & ~7;
    const h = this.handle();
    this.keep(h, this.slab, off, n, fileOffset, layout);
    this.cinOf[h] = 0;
    return h;
  }

  private keep(h: number, id: number, off: number, n: number, fileOffset: number, L: AttrLayout | undefined): void {
    this.refs[id]!++;
    this.bufOf[h] = id;
    this.offOf[h] = off;
    this.lenOf[h] = n;
    this.fileOffOf[h] = fileOffset;
    this.layoutOf[h] = this.layoutId(L);
  }

  /**
   * The record of a handle, which is then free again. `reuse`: as one of a
   * ring of REUSE_RING objects made again and again (RawRecord.reset), valid
   * until REUSE_RING more records are taken so (SessionOptions.reuseRecords);
   * else a new object.
   */
  take(h: number, reuse = false): RawRecord {
    const id = this.bufOf[h]!;
    let r: RawRecord;
    if (id < 0) {
      r = this.objs[h]!;
      this.objs[h] = undefined;
    } else {
      const L = this.layouts[this.layoutOf[h]!];
      const b = this.bufs[id]!;
      const fileOff = this.fileOffOf[h]!;
      const cin = this.cinOf[h]!;
      const off = this.offOf[h]!;
      const len = this.lenOf[h]!;
      const old = reuse ? this.ring[this.ringAt] : undefined;
      if (old === undefined) r = new RawRecord(b, fileOff, this.le, L, this.textPokeAbi, cin, off, len);
      else {
        old.reset(b, fileOff, L, cin, off, len);
        r = old;
      }
      if (reuse) {
        this.ring[this.ringAt] = r;
        this.ringAt = this.ringAt + 1 === REUSE_RING ? 0 : this.ringAt + 1;
      }
      if (--this.refs[id]! === 0 && id !== this.slab && id !== this.unpacked) this.release(id);
    }
    if (this.freeTop === this.free.length) this.free = grow(this.free, this.free.length * 2);
    this.free[this.freeTop++] = h;
    return r;
  }

  private handle(): number {
    if (this.freeTop > 0) return this.free[--this.freeTop]!;
    const h = this.next++;
    if (h === this.bufOf.length) {
      const n = h * 2;
      this.bufOf = grow(this.bufOf, n);
      this.offOf = grow(this.offOf, n);
      this.lenOf = grow(this.lenOf, n);
      this.fileOffOf = grow(this.fileOffOf, n);
      this.layoutOf = grow(this.layoutOf, n);
      this.cinOf = grow(this.cinOf, n);
    }
    return h;
  }

  /** `src` as a DataView: the reader's window is one array for many records, so its view is kept. */
  private viewOfSource(src: Uint8Array): DataView {
    if (src !== this.srcArray) {
      this.srcArray = src;
      this.srcView = viewOf(src);
    }
    return this.srcView!;
  }

  private layoutId(L: AttrLayout | undefined): number {
    if (L === this.lastLayout && this.lastLayoutId >= 0) return this.lastLayoutId;
    let i = this.layouts.indexOf(L);
    if (i < 0) i = this.layouts.push(L) - 1;
    this.lastLayout = L;
    this.lastLayoutId = i;
    return i;
  }

  private newSlab(): Uint8Array {
    const b = new Uint8Array(SLAB);
    this.slabs.add(b);
    return b;
  }

  private newBuffer(b: Uint8Array): number {
    const id = this.freeBufs.length ? this.freeBufs.pop()! : this.bufs.length;
    this.bufs[id] = b;
    this.refs[id] = 0;
    return id;
  }

  /** A slab or unpacked buffer is no longer the current one: free it if nothing in it waits. */
  private retire(id: number): void {
    if (id >= 0 && this.refs[id] === 0) this.release(id);
  }

  private release(id: number): void {
    const b = this.bufs[id]!;
    // an emptied slab is filled again: a new one each MiB was a page fault per 4 KiB queued
    if (this.slabs.has(b) && this.spareSlabs.length < MAX_SPARE_SLABS) this.spareSlabs.push(b);
    this.bufs[id] = undefined;
    this.freeBufs.push(id);
  }
}

function grow<A extends Int32Array | Float64Array>(a: A, n: number): A {
  const b = new (a.constructor as new (n: number) => A)(n);
  b.set(a);
  return b;
}

/** dst[at..] = src[from .. from + n): the small records most are through the DataViews (set() wants a view). */
function copyBytes(
  dst: Uint8Array,
  dstView: DataView,
  at: number,
  src: Uint8Array,
  srcView: DataView,
  from: number,
  n: number,
): void {
  if (n > 128) dst.set(src.subarray(from, from + n), at);
  else copyView(dstView, at, srcView, from, n);
}
