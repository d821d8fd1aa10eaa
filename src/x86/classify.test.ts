import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { classifyInsn, BlockCache, type InsnOp } from './index.js';
import { cannotCompare } from '../../test/require-tool.js';

/**
 * Cross-check against a real disassembler: GNU objdump's decode of a
 * system binary's .text. For several thousand instructions the length, the
 * branch kind and the direct target must agree.
 */
interface ObjInsn {
  addr: bigint;
  bytes: number[];
  mnem: string;
  ops: string;
}

const BINARY = ['/usr/bin/bash', '/usr/bin/perf', '/usr/bin/gdb'].find((p) => existsSync(p));
const LIMIT = 12000;

function objdumpText(): ObjInsn[] | string {
  if (!BINARY) return 'no system binary to disassemble';
  const r = spawnSync('objdump', ['-d', '-j', '.text', '--insn-width=16', BINARY], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (r.error || r.status !== 0) return `objdump not usable: ${r.error?.message ?? r.stderr}`;
  const out: ObjInsn[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(.*)$/.exec(line);
    if (!m) continue;
    const text = m[3]!.replace(/\s+#.*$/, '').trim();
    // prefixes objdump prints as separate words
    const words = text.split(/\s+/);
    const prefix = /^(bnd|notrack|rep|repz|repnz|repe|repne|lock|data16|addr32|cs|ds|ss|es|fs|gs|rex(\.\w+)?)$/;
    while (words.length > 1 && (prefix.test(words[0]!) || /^(xacquire|xrelease)$/.test(words[0]!))) words.shift();
    out.push({
      addr: BigInt(`0x${m[1]}`),
      bytes: m[2]!
        .trim()
        .split(' ')
        .map((h) => parseInt(h, 16)),
      mnem: words[0] ?? '',
      ops: words.slice(1).join(' '),
    });
    if (out.length >= LIMIT) break;
  }
  return out;
}

function objdumpKind(i: ObjInsn): { op: InsnOp; indirect: boolean; target?: bigint } | 'skip' {
  // AT&T size suffixes objdump may add: callq, retq, jmpq, iretq, sysretq, lretq
  const m = /^(callq|retq|jmpq|iretq|sysretq|lretq|sysexitq|retw|lretw)$/.test(i.mnem) ? i.mnem.slice(0, -1) : i.mnem;
  const indirect = i.ops.startsWith('*');
  const target = /^([0-9a-f]+)(\s|$)/.exec(i.ops);
  if (m === '(bad)') return 'skip';
  if (m === 'jmp' || m === 'call') {
    return indirect ? { op: m, indirect: true } : { op: m, indirect: false, target: BigInt(`0x${target![1]}`) };
  }
  if (/^(j[a-z]+|loop[a-z]*|jrcxz|jecxz)$/.test(m))
    return { op: 'jcc', indirect: false, target: BigInt(`0x${target![1]}`) };
  if (m === 'ret') return { op: 'ret', indirect: true };
  if (m === 'lret' || m === 'ljmp' || m === 'lcall') return { op: 'far', indirect: true };
  if (m === 'iret' || m === 'iretd') return { op: 'iret', indirect: true };
  if (m === 'syscall' || m === 'sysenter') return { op: 'syscall', indirect: true };
  if (m === 'sysret' || m === 'sysexit') return { op: 'sysret', indirect: true };
  if (m === 'int3') return { op: 'int3', indirect: true };
  if (m === 'int' || m === 'int1' || m === 'icebp' || m === 'into') return { op: 'int', indirect: true };
  return { op: 'other', indirect: false };
}

test('classifyInsn agrees with objdump on lengths, branch kinds and targets', (t) => {
  const insns = objdumpText();
  if (typeof insns === 'string') return cannotCompare(t, insns);
  assert.ok(insns.length > 3000, `only ${insns.length} instructions from objdump`);
  const counts: Record<string, number> = {};
  let compared = 0;
  for (const i of insns) {
    const want = objdumpKind(i);
    if (want === 'skip') continue;
    const got = classifyInsn(Uint8Array.from(i.bytes), i.addr);
    assert.ok(got, `${i.addr.toString(16)}: ${i.mnem} ${i.ops} did not decode`);
    assert.equal(got.length, i.bytes.length, `${i.addr.toString(16)}: ${i.mnem} ${i.ops} length`);
    assert.equal(got.op, want.op, `${i.addr.toString(16)}: ${i.mnem} ${i.ops} op`);
    assert.equal(got.indirect, want.indirect, `${i.addr.toString(16)}: ${i.mnem} ${i.ops} indirect`);
    assert.equal(got.target, want.target, `${i.addr.toString(16)}: ${i.mnem} ${i.ops} target`);
    assert.equal(got.endsBlock, want.op !== 'other');
    counts[want.op] = (counts[want.op] ?? 0) + 1;
    compared++;
  }
  t.diagnostic(`${BINARY}: ${compared} instructions compared, ${JSON.stringify(counts)}`);
  for (const k of ['jcc', 'jmp', 'call', 'ret', 'other']) assert.ok((counts[k] ?? 0) > 10, `too few ${k}`);
});

test('BlockCache walks the same instructions as objdump and invalidates overlapping blocks', (t) => {
  const insns = objdumpText();
  if (typeof insns === 'string') return cannotCompare(t, insns);
  const base = insns[0]!.addr;
  const last = insns[insns.length - 1]!;
  const mem = new Uint8Array(Number(last.addr - base) + last.bytes.length);
  for (const i of insns) mem.set(i.bytes, Number(i.addr - base));
  let reads = 0;
  const cache = new BlockCache((addr, len) => {
    reads++;
    const off = Number(addr - base);
    if (off < 0 || off >= mem.length) return undefined;
    return mem.subarray(off, Math.min(mem.length, off + len));
  });
  const byAddr = new Map(insns.map((i, k) => [i.addr, k]));
  // Start a block after every block-ending instruction, as a flow decoder would.
  let blocks = 0;
  let k = 0;
  while (k < insns.length - 20) {
    const b = cache.get(insns[k]!.addr);
    if (b.stop === 'nomap' || b.stop === 'invalid') break;
    for (const insn of b.insns) {
      const o: ObjInsn = insns[k++]!;
      assert.equal(insn.ip, o.addr);
      assert.equal(insn.length, o.bytes.length, `${o.addr.toString(16)} ${o.mnem}`);
    }
    blocks++;
    assert.ok(byAddr.has(b.end) || k >= insns.length);
  }
  assert.ok(blocks > 500, `${blocks} blocks`);
  const size = cache.size;
  // a second walk hits the cache
  const r0 = reads;
  cache.get(insns[0]!.addr);
  assert.equal(reads, r0);
  // poke one byte in the middle of the third block: exactly the blocks containing it go
  const b0 = cache.get(insns[0]!.addr);
  const b1 = cache.get(b0.end);
  const b2 = cache.get(b1.end);
  const mid = b2.start + (b2.end - b2.start) / 2n;
  const overlapping = [b0, b1, b2].filter((b) => b.start <= mid && mid < b.end).length;
  assert.equal(cache.invalidate(mid, mid + 1n), overlapping);
  assert.equal(cache.size, size - overlapping);
  const again = cache.get(b2.start);
  assert.notEqual(again, b2, 'block decoded anew after invalidate');
  assert.deepEqual(
    again.insns.map((i) => i.ip),
    b2.insns.map((i) => i.ip),
  );
  assert.equal(cache.get(b0.start), b0, 'untouched block kept');
});

test('invalid and unreadable bytes stop a block', () => {
  const cache = new BlockCache((addr, len) =>
    addr === 0x1000n ? Uint8Array.from([0x90, 0x90, 0x06]).subarray(0, len) : undefined,
  );
  const b = cache.get(0x1000n);
  assert.equal(b.insns.length, 2);
  assert.equal(b.end, 0x1002n);
  assert.ok(b.stop === 'invalid' || b.stop === 'nomap');
  assert.equal(cache.get(0x5000n).stop, 'nomap');
  assert.equal(classifyInsn(Uint8Array.from([0x06]), 0n), null);
  assert.equal(classifyInsn(Uint8Array.from([0xe8, 0x00]), 0n), null, 'truncated call');
});

test(
  'invalidate: a poke fixing the bytes a block stopped on drops it; a poke just after a branch block does ' + 'not',
  () => {
    // 0x1000: nop; nop; (06 = invalid in 64-bit)   0x2000: nop; ret   0x2002: nop; ret
    const mem = new Map<bigint, number[]>([
      [0x1000n, [0x90, 0x90, 0x06, 0x90]],
      [0x2000n, [0x90, 0xc3, 0x90, 0xc3]],
    ]);
    const read = (addr: bigint, len: number): Uint8Array | undefined => {
      for (const [base, bytes] of mem) {
        if (addr >= base && addr < base + BigInt(bytes.length))
          return Uint8Array.from(bytes.slice(Number(addr - base), Number(addr - base) + len));
      }
      return undefined;
    };
    const cache = new BlockCache(read);
    const a = cache.get(0x1000n);
    assert.equal(a.end, 0x1002n);
    const b = cache.get(0x2000n);
    assert.equal(b.stop, 'branch');
    assert.equal(b.end, 0x2002n);
    // get() decoded the block after the branch block too (0x2002..0x2004): it holds the poked byte
    assert.equal(cache.invalidate(0x2002n, 0x2003n), 1, 'only the block at 0x2002 is dropped');
    assert.equal(cache.get(0x2000n), b, 'block ending before the poke kept');
    mem.set(0x1000n, [0x90, 0x90, 0x90, 0xc3]);
    assert.equal(cache.invalidate(0x1002n, 0x1003n), 1, 'the block stopped on the invalid byte is dropped');
    const a2 = cache.get(0x1000n);
    assert.notEqual(a2, a);
    assert.equal(a2.stop, 'branch');
    assert.deepEqual(
      a2.insns.map((i) => i.op),
      ['other', 'other', 'other', 'ret'],
    );
  },
);
