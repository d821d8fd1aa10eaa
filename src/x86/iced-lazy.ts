/**
 * iced-x86 loaded on first use, for modules on paths that rarely decode
 * (script's insn/insnlen fields): loading it costs ~50 ms of start-up and
 * 2.5 MB of heap in every `perfpoke script`, which prints no instruction on
 * nearly every run. Modules that always decode import './iced.js'.
 */
import { createRequire } from 'node:module';
import type * as IcedX86 from 'iced-x86';

let loaded: typeof IcedX86 | undefined;

export function icedModule(): typeof IcedX86 {
  loaded ??= createRequire(import.meta.url)('iced-x86') as typeof IcedX86;
  return loaded;
}
