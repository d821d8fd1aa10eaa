/** Test helper: make code missing from a simulated recording's image (error 5, "Failed to get instruction"). */
import { readFileSync, writeFileSync } from 'node:fs';

/** Cut every PT_LOAD segment of an ELF64 (little-endian) core to `size` bytes. */
export function cutLoadSegments(path: string, size: number): void {
  const b = readFileSync(path);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  for (let i = 0; i < b.readUInt16LE(0x38); i++) {
    const o = phoff + i * phentsize;
    if (b.readUInt32LE(o) !== 1) continue;
    b.writeBigUInt64LE(BigInt(size), o + 32); // p_filesz
    b.writeBigUInt64LE(BigInt(size), o + 40); // p_memsz
  }
  writeFileSync(path, b);
}
