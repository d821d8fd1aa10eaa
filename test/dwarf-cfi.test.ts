/**
 * The CFI tables of src/machine/dwarf-cfi.ts against binutils' own reading
 * of them: `readelf --debug-dump=frames-interp` prints, for every FDE, one
 * row per location with the CFA rule and each register's rule. Every row of
 * every FDE of ld.so, libc and (when gcc runs) a program compiled here must
 * match ours at that location: CFA `reg+off` or `exp`, registers `c±N`
 * (saved at CFA±N), `u` (undefined or not saved), `s`, `rN` (in register N),
 * `exp`/`vexp`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findFde, parseCfi, type RegRule, unwindRow } from '../src/machine/dwarf-cfi.js';
import { needTool } from './require-tool.js';
import { tempDir } from './temp-dir.js';

const NAMES = ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp'];
const regName = (n: number): string => NAMES[n] ?? (n < 16 ? `r${n}` : n === 16 ? 'rip' : `r${n}`);

function section(buf: Buffer, name: string): { addr: bigint; offset: number; size: number } | undefined {
  const shoff = Number(buf.readBigUInt64LE(40));
  const shnum = buf.readUInt16LE(60);
  const strs = shoff + buf.readUInt16LE(62) * 64;
  const strOff = Number(buf.readBigUInt64LE(strs + 24));
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * 64;
    const n = strOff + buf.readUInt32LE(o);
    if (buf.toString('latin1', n, n + name.length + 1) !== `${name}\0`) continue;
    return {
      addr: buf.readBigUInt64LE(o + 16),
      offset: Number(buf.readBigUInt64LE(o + 24)),
      size: Number(buf.readBigUInt64LE(o + 32)),
    };
  }
  return undefined;
}

function ruleText(r: RegRule | undefined): string {
  if (!r) return 'u';
  switch (r.kind) {
    case 'undefined':
      return 'u';
    case 'same':
      return 's';
    case 'offset':
      return `c${r.off < 0n ? '' : '+'}${r.off}`;
    case 'valOffset':
      return `v${r.off < 0n ? '' : '+'}${r.off}`;
    case 'register':
      return `r${r.reg}`;
    case 'expression':
      return 'exp';
    case 'valExpression':
      return 'vexp';
  }
}

/** Compare every readelf row of the file's .eh_frame; returns the rows compared. */
function compareFile(path: string): number {
  const buf = readFileSync(path);
  const eh = section(buf, '.eh_frame');
  assert.ok(eh, `${path} has .eh_frame`);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const fdes = parseCfi(bytes, eh.offset, eh.size, eh.addr, true);
  const r = spawnSync('readelf', ['--debug-dump=frames-interp', path], { encoding: 'utf8', maxBuffer: 1 << 28 });
  // readelf exits 1 on files whose separate debug info it cannot follow; the tables are printed all the same
  assert.match(r.stdout, / FDE cie=/, `readelf printed ${path}'s FDEs: ${r.stderr}`);
  let cols: string[] = [];
  let rows = 0;
  let inFde = false;
  for (const line of r.stdout.split('\n')) {
    if (/ FDE cie=/.test(line)) {
      inFde = true;
      continue;
    }
    if (/ CIE\b/.test(line)) inFde = false;
    const head = /^\s+LOC\s+CFA\s*(.*)$/.exec(line);
    if (head) {
      cols = head[1]!.trim().split(/\s+/).filter(Boolean);
      continue;
    }
    const m = /^([0-9a-f]{16}) (.*)$/.exec(line);
    if (!m || !inFde) continue;
    const pc = BigInt(`0x${m[1]}`);
    // a register rule prints as "r9 (r9)": the number, then the name
    const cells = m[2]!
      .replace(/ \(\w+\)/g, '')
      .trim()
      .split(/\s+/);
    const fde = findFde(fdes, pc);
    assert.ok(fde, `${path}: an FDE covers 0x${m[1]}`);
    const row = unwindRow(bytes, fde, pc, eh.addr, eh.offset);
    const cfa = row.cfa.kind === 'reg' ? `${regName(row.cfa.reg)}+${row.cfa.off}` : 'exp';
    const ours = [cfa, ...cols.map((c) => ruleText(row.regs.get(c === 'ra' ? row.raReg : dwarfNumber(c))))];
    assert.deepEqual(ours, cells, `${path} at 0x${m[1]} (columns CFA ${cols.join(' ')})`);
    rows++;
  }
  return rows;
}

function dwarfNumber(name: string): number {
  const i = NAMES.indexOf(name);
  if (i >= 0) return i;
  const m = /^r(\d+)$/.exec(name);
  return m ? Number(m[1]) : -1;
}

for (const path of ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', '/usr/lib/x86_64-linux-gnu/libc.so.6']) {
  test(`CFI rows of ${path} equal readelf's frames-interp`, (t) => {
    if (!needTool(t, 'readelf')) return;
    if (!existsSync(path)) return t.skip(`${path} is not on this machine`);
    t.diagnostic(`${compareFile(path)} rows compared`);
  });
}

test('CFI rows of a gcc-compiled program (PLT stubs with CFA expressions) equal readelf', (t) => {
  if (!needTool(t, 'readelf') || !needTool(t, 'gcc')) return;
  const dir = tempDir('perfpoke-cfi-');
  const src = join(dir, 'p.c');
  writeFileSync(src, '#include <stdio.h>\nint main(int c, char **v) { puts(v[0]); return c > 3 ? 1 : 0; }\n');
  const r = spawnSync('gcc', ['-O2', '-o', join(dir, 'p'), src], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  t.diagnostic(`${compareFile(join(dir, 'p'))} rows compared`);
});
