/**
 * Growable, endian-aware output buffer: the writer's half of ByteReader.
 * Reserve a field, write on, then patch it (mcap's BufferBuilder habit).
 */
export class ByteWriter {
  private buf: Uint8Array;
  private dv: DataView;
  readonly le: boolean;
  pos = 0;

  constructor(le = true, initial = 256) {
    this.le = le;
    this.buf = new Uint8Array(initial);
    this.dv = new DataView(this.buf.buffer);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.byteLength) return;
    let cap = this.buf.byteLength * 2;
    while (cap < this.pos + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.pos));
    this.buf = nb;
    this.dv = new DataView(nb.buffer);
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v & 0xff;
    return this;
  }
  u16(v: number): this {
    this.ensure(2);
    this.dv.setUint16(this.pos, v, this.le);
    this.pos += 2;
    return this;
  }
  u32(v: number): this {
    this.ensure(4);
    this.dv.setUint32(this.pos, v >>> 0, this.le);
    this.pos += 4;
    return this;
  }
  i32(v: number): this {
    this.ensure(4);
    this.dv.setInt32(this.pos, v, this.le);
    this.pos += 4;
    return this;
  }
  u64(v: bigint | number): this {
    this.ensure(8);
    this.dv.setBigUint64(this.pos, BigInt.asUintN(64, BigInt(v)), this.le);
    this.pos += 8;
    return this;
  }
  i64(v: bigint | number): this {
    this.ensure(8);
    this.dv.setBigInt64(this.pos, BigInt.asIntN(64, BigInt(v)), this.le);
    this.pos += 8;
    return this;
  }
  bytes(b: Uint8Array): this {
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
    return this;
  }
  zeros(n: number): this {
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
    return this;
  }
  /** A NUL-terminated string padded with zeros to a multiple of `align` (0 = no padding). */
  cstring(s: string, align = 0): this {
    const b = Buffer.from(s, 'utf8');
    this.bytes(b).u8(0);
    if (align > 0) this.alignTo(align);
    return this;
  }
  alignTo(n: number): this {
    const pad = (n - (this.pos % n)) % n;
    return this.zeros(pad);
  }
  patchU16(at: number, v: number): void {
    this.dv.setUint16(at, v, this.le);
  }
  patchU32(at: number, v: number): void {
    this.dv.setUint32(at, v >>> 0, this.le);
  }
  patchU64(at: number, v: bigint | number): void {
    this.dv.setBigUint64(at, BigInt.asUintN(64, BigInt(v)), this.le);
  }
  /** The bytes written so far (a view; copy it if you keep writing). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}
