import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Window, fileFill, type FillFn } from './window.js';

/** A fill over bytes in memory, `step` bytes at most per call, seekable or not. */
function memFill(bytes: Uint8Array, step: number, seekable: boolean): FillFn {
  let pos = 0;
  const fill: FillFn = async (buf, off, len) => {
    const n = Math.min(len, step, bytes.length - pos);
    buf.set(bytes.subarray(pos, pos + n), off);
    pos += n;
    return n;
  };
  if (seekable)
    fill.seek = (to) => {
      if (to > bytes.length) return false;
      pos = to;
      return true;
    };
  return fill;
}

test('skip lands where readPayload does, seeking or reading through', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ minLength: 1, maxLength: 400 }),
      fc.array(fc.nat(120), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 8, max: 64 }),
      fc.integer({ min: 1, max: 50 }),
      fc.boolean(),
      async (bytes, sizes, win, step, seekable) => {
        const read = new Window(memFill(bytes, step, false), 0, bytes.length, win);
        const skip = new Window(memFill(bytes, step, seekable), 0, bytes.length, win);
        for (const n of sizes) {
          const a = await read.readPayload(n, 'payload').then(
            () => 'ok',
            (e: Error) => e.message,
          );
          const b = await skip.skip(n, 'payload').then(
            () => 'ok',
            (e: Error) => e.message,
          );
          assert.equal(b, a);
          if (a !== 'ok') return;
          assert.equal(skip.pos, read.pos);
          // the byte after the payload reads the same
          const more = await read.ensure(1);
          assert.equal(await skip.ensure(1), more);
          if (more) assert.equal(skip.peek(1)[0], read.peek(1)[0]);
        }
      },
    ),
  );
});

test('fileFill seeks within the file only; a payload past its end reads through to the truncation error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-window-'));
  try {
    const path = join(dir, 'f');
    writeFileSync(
      path,
      Uint8Array.from({ length: 100 }, (_v, i) => i),
    );
    const fh = await open(path, 'r');
    try {
      const w = new Window(fileFill(fh, 0, 100), 0, 200, 16);
      await w.skip(50, 'payload');
      assert.equal(w.pos, 50);
      assert.ok(await w.ensure(1));
      assert.equal(w.peek(1)[0], 50);
      await assert.rejects(w.skip(60, 'payload'), /payload/);
    } finally {
      await fh.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
