export * from './classify.js';
export * from './block-cache.js';
export * from './disasm.js';
export * from './poke-kind.js';
export * from './insn-length.js';
