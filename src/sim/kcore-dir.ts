/**
 * The kcore_dir a simulated recording carries, as `perf record --kcore`
 * writes it: the program's code as an ELF core file, a kallsyms naming its
 * functions, and an empty modules file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeElfCore } from '../machine/elf-core-writer.js';
import { PF_R, PF_X } from '../machine/elf-core.js';
import { hex016 } from '../io/hex.js';
import type { Program } from './codegen.js';

export function writeKcoreDir(dir: string, prog: Program): void {
  writeFileSync(join(dir, 'kcore'), writeElfCore([{ vaddr: prog.base, bytes: prog.code, flags: PF_R | PF_X }]));
  const hex = (off: number): string => hex016(prog.base + BigInt(off));
  const lines = [`${hex(0)} T _text`, `${hex(0)} T _stext`];
  for (const f of prog.functions) lines.push(`${hex(f.off)} T ${f.name}`);
  lines.push(`${hex(prog.code.length)} T _etext`);
  writeFileSync(join(dir, 'kallsyms'), `${lines.join('\n')}\n`);
  // Must exist, even empty, or perf does not use kcore_dir (perf need 1).
  writeFileSync(join(dir, 'modules'), '');
}
