import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteText, PAD_SPACE, PAD_ZERO } from './byte-text.js';

const u32 = fc.oneof(fc.integer({ min: 0, max: 0xff }), fc.integer({ min: 0, max: 0xffffffff }));
const pad = (s: string, w: number, c: string): string => s.padStart(w, c);

// Every number path must print what printf (here: BigInt.toString) prints, at every width and pad.
test('ByteText numbers equal BigInt.toString, padded as printf pads', () => {
  fc.assert(
    fc.property(u32, u32, fc.integer({ min: 0, max: 24 }), fc.boolean(), (hi, lo, w, zero) => {
      const v = (BigInt(hi) << 32n) | BigInt(lo);
      const c = zero ? '0' : ' ';
      const p = zero ? PAD_ZERO : PAD_SPACE;
      const t = new ByteText(4);
      t.hex64(hi, lo, w, p);
      t.byte(0x7c);
      t.dec64(hi, lo, w, p);
      t.byte(0x7c);
      const small = Number(v & 0x1f_ffff_ffff_ffffn);
      t.hex(small, w, p);
      t.byte(0x7c);
      t.dec(small, w, p);
      t.byte(0x7c);
      t.decSigned(-small, w);
      t.byte(0x7c);
      t.big(-v, 16, w, p);
      const want = [
        pad(v.toString(16), w, c),
        pad(v.toString(10), w, c),
        pad(small.toString(16), w, c),
        pad(small.toString(10), w, c),
        pad((-small).toString(10), w, ' '),
        pad((-v).toString(16), w, c),
      ].join('|');
      assert.equal(t.toString(), want);
    }),
  );
});

test('ByteText strings: ASCII, UTF-8 past ASCII, long ones, growth, fill and bytes', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ minLength: 60, maxLength: 300 }))),
      (parts) => {
        const t = new ByteText(1);
        for (const s of parts) t.str(s);
        t.fill(0x2e, 3);
        t.bytes(Buffer.from('xyz'), 1, 3);
        assert.equal(t.toString(), `${parts.join('')}...yz`);
        t.clear();
        assert.equal(t.view().length, 0);
      },
    ),
  );
});

test('ByteText hex16 is "%016lx"', () => {
  fc.assert(
    fc.property(u32, u32, (hi, lo) => {
      const t = new ByteText(1);
      t.byte(0x3a);
      t.hex16(hi, lo);
      assert.equal(t.toString(), `:${((BigInt(hi) << 32n) | BigInt(lo)).toString(16).padStart(16, '0')}`);
    }),
  );
});

test('ByteText append copies its bytes, growing the buffer', () => {
  const t = new ByteText(1);
  const long = 'x'.repeat(40); // past the byte-by-byte copy
  for (let i = 0; i < 100; i++) t.append(Buffer.from(i % 2 ? long : 'ab c'));
  assert.equal(t.toString(), `ab c${long}`.repeat(50));
});

// dec and decSigned write their digits straight into the buffer: the lengths' edges, and growth mid-number
/** printf's "%*lu" / "%0*lu" / "%*ld" as JavaScript strings say them. */
const printed = (v: number | bigint, width: number, pad: string): string => `${v}`.padStart(width, pad);

const widths = fc.integer({ min: 0, max: 24 });
const values = fc.oneof(
  fc.integer({ min: 0, max: 99 }),
  fc.integer({ min: 0, max: 0x7fffffff }),
  fc.constantFrom(0, 9, 10, 99, 100, 999_999_999, 1_000_000_000, 0x7fffffff, 0x80000000, 2 ** 53 - 1),
  fc.maxSafeInteger().filter((v) => v >= 0),
);

test('dec: digits and padding as printf prints them, after text already in the buffer', () => {
  fc.assert(
    fc.property(values, widths, fc.boolean(), fc.string({ maxLength: 5 }), (v, w, zero, before) => {
      const t = new ByteText(8); // small: the number's own reserve() must grow it
      t.str(before);
      t.dec(v, w, zero ? PAD_ZERO : PAD_SPACE);
      assert.equal(t.toString(), before + printed(v, w, zero ? '0' : ' '));
    }),
  );
});

test('decSigned: negative values keep the sign before the digits, padded on the left', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        values,
        values.map((v) => -v),
      ),
      widths,
      (v, w) => {
        const t = new ByteText(4);
        t.decSigned(v, w);
        t.byte(0x7c);
        assert.equal(t.toString(), `${printed(v, w, ' ')}|`);
      },
    ),
  );
});
