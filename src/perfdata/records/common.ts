import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import type { AttrLayout } from '../layout.js';
import type { SampleId } from '../sample-id.js';

/** Fields every decoded record carries: the perf_event_header and where it sits. */
export interface RecordHead {
  type: number;
  misc: number;
  /** header.size: the record's length in bytes, header included. */
  size: number;
  /**
   * Absolute offset in the file/stream (for records from a COMPRESSED record:
   * the COMPRESSED record's offset, as perf does).
   */
  fileOffset: number;
}

/** Kernel records (types < 64 except SAMPLE) may carry the sample_id_all trailer. */
export interface KernelRecordHead extends RecordHead {
  sampleId?: SampleId;
  /**
   * Bytes between the end of a self-sized body and the sample_id, when
   * header.size is larger than body + sample_id (Linux 6.1's inflated
   * TEXT_POKE/KSYMBOL records, see bodyEndOf in records/index.ts). Absent when exact.
   */
  inflatedBy?: number;
}

/** What decoders may need besides the bytes. */
export interface DecodeContext {
  le: boolean;
  /**
   * The layout of the attr this record belongs to (undefined when the file has no attrs yet,
   * e.g. early pipe-mode records).
   */
  layout?: AttrLayout;
  textPokeAbi: 'final' | 'rfc';
}

/**
 * Each per-type module exports `decodeX(r, head, ctx)` reading the record BODY
 * (after the 8-byte header, before any sample_id trailer) and `encodeX(rec, w, layout)`
 * writing exactly that body. `encodeRecord` adds header, trailer and size.
 */
export type BodyDecoder<R> = (r: ByteReader, head: RecordHead, ctx: DecodeContext) => R;
export type BodyEncoder<R> = (rec: R, w: ByteWriter, layout?: AttrLayout) => void;
