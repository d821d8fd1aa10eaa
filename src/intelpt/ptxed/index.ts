export * from './event-types.js';
export { EventDecoder, EVB, type EventDecoderOptions } from './event-decoder.js';
export { decodePtxed, type PtxedSink, type PtxedDecodeOptions, type PtxedResult } from './insn-walk.js';
