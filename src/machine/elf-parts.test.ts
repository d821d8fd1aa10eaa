import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readElfParts } from './elf-parts.js';
import { hasRealDynsym, pltSymbols } from './elf-plt.js';
import { loadSegments, readElfSymbols } from './elf-symbols.js';
import { debuglinkName, readBytes } from './symbol-sources.js';

/** This machine's binaries, libraries and separate debug files: what the symbol loader meets. */
function systemElfFiles(): string[] {
  const out = ['/usr/bin/find', '/usr/bin/md5sum', '/usr/bin/perf', process.execPath];
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu'])
    if (existsSync(dir))
      out.push(
        ...readdirSync(dir)
          .filter((f) => /^lib(c|m|pthread|z|pcre2-8)\.so/.test(f))
          .map((f) => join(dir, f)),
      );
  const dbg = '/usr/lib/debug/.build-id';
  if (existsSync(dbg))
    for (const d of readdirSync(dbg).slice(0, 40)) {
      const p = join(dbg, d);
      try {
        out.push(
          ...readdirSync(p)
            .filter((f) => f.endsWith('.debug'))
            .map((f) => join(p, f)),
        );
      } catch {
        // not a directory
      }
    }
  return out.filter((p) => existsSync(p));
}

test('the parts read give every reader the same answer as the whole file', () => {
  const files = systemElfFiles();
  assert.ok(files.length >= 3, `found ELF files to compare: ${files.join(', ')}`);
  for (const path of files) {
    const whole = readBytes(path)!;
    const parts = readElfParts(path)!;
    assert.equal(parts.length, whole.length, path);
    const a = readElfSymbols(whole);
    const b = readElfSymbols(parts);
    assert.deepEqual(b, a, `${path}: symbols and build-id`);
    assert.deepEqual(loadSegments(parts), loadSegments(whole), `${path}: PT_LOADs`);
    assert.equal(hasRealDynsym(parts), hasRealDynsym(whole), `${path}: .dynsym`);
    assert.deepEqual(pltSymbols(parts), pltSymbols(whole), `${path}: PLT symbols`);
    assert.equal(debuglinkName(parts), debuglinkName(whole), `${path}: .gnu_debuglink`);
  }
});

test('a file that is not ELF is read whole; a missing one is undefined', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perfpoke-elf-parts-'));
  try {
    const p = join(dir, 'not-elf');
    const bytes = Buffer.from('#!/bin/sh\necho not an ELF file, but long enough to have a header\n'.repeat(4));
    writeFileSync(p, bytes);
    assert.deepEqual(Buffer.from(readElfParts(p)!), bytes);
    assert.equal(readElfParts(join(dir, 'missing')), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
