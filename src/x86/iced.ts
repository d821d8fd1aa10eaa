/**
 * iced-x86, loaded with require(). It is a 1 MB CommonJS module: imported
 * from an ES module, node first scans all of it with its CJS export lexer to
 * find the named exports (about 130 ms of CPU per process, measured on this
 * machine, of the 220 ms the import costs); require() skips that scan. The
 * x86 modules and the simulator take iced's classes and enums from here.
 */
import { createRequire } from 'node:module';
import type * as IcedX86 from 'iced-x86';

const iced = createRequire(import.meta.url)('iced-x86') as typeof IcedX86;

export const { Decoder, DecoderOptions, FlowControl, Formatter, FormatterSyntax, Instruction, Mnemonic } = iced;
// the simulator's assembler encodes with these
export const { Code, Encoder, MemoryOperand, Register } = iced;
export type Code = IcedX86.Code;
export type Encoder = IcedX86.Encoder;
export type MemoryOperand = IcedX86.MemoryOperand;
export type Register = IcedX86.Register;
export type Decoder = IcedX86.Decoder;
export type Instruction = IcedX86.Instruction;
export type Formatter = IcedX86.Formatter;
