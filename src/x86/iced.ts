/**
 * iced-x86, loaded with require(). It is a 1 MB CommonJS module: imported
 * from an ES module, node first scans all of it with its CJS export lexer to
 * find the named exports (about 130 ms of CPU per process, measured on this
 * machine, of the 220 ms the import costs); require() skips that scan. The
 * x86 modules take iced's classes and enums from here.
 */
import { createRequire } from 'node:module';
import type * as IcedX86 from 'iced-x86';

const iced = createRequire(import.meta.url)('iced-x86') as typeof IcedX86;

export const { Decoder, DecoderOptions, FlowControl, Formatter, FormatterSyntax, Instruction, Mnemonic } = iced;
export type Decoder = IcedX86.Decoder;
export type Instruction = IcedX86.Instruction;
export type Formatter = IcedX86.Formatter;
