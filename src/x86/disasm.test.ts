import assert from 'node:assert/strict';
import { test } from 'node:test';
import { disassembleLine, firstInsn } from './disasm.js';

// The memo of decodes must never answer for other bytes, another address, or with a stale target name.
test('disassembleLine: memoized decodes follow the bytes, the address and the current names', () => {
  const ip = 0xffffffff81000000n;
  const buf = Uint8Array.of(0xe9, 0x0b, 0x00, 0x00, 0x00);
  assert.equal(
    disassembleLine(buf, ip, () => 'a'),
    'jmp 0xffffffff81000010 <a>',
  );
  assert.equal(
    disassembleLine(buf, ip, () => 'b'),
    'jmp 0xffffffff81000010 <b>',
  );
  assert.equal(disassembleLine(buf, ip + 0x10n), 'jmp 0xffffffff81000020');
  buf.set([0x0f, 0x1f, 0x44, 0x00, 0x00]); // the caller's array reused for other bytes
  assert.equal(disassembleLine(buf, ip), 'nopl (%rax,%rax)');
  assert.equal(firstInsn(buf, ip)?.mnemonic, 'nop');
  buf.set([0xe8, 0x0b, 0x00, 0x00, 0x00]);
  assert.equal(firstInsn(buf, ip)?.mnemonic, 'call');
  assert.equal(disassembleLine(buf.subarray(0, 3), ip), '(bad)');
});
