/**
 * `perfpoke decode --raw-pt FILE --image BIN:ADDR`: a bare Intel PT stream
 * decoded over flat images (no pokes), printed as libipt's `ptxed --no-inst`.
 */
import { readFileSync } from 'node:fs';
import { decodeFlow, type FlowCodeReader } from '../intelpt/flow/decode.js';
import { ptxedSink } from '../format/itrace.js';
import { UsageError } from './errors.js';
import { OutputSink } from './output.js';

/** Flat images for raw mode: a sorted list of (addr, bytes). */
class FlatImage implements FlowCodeReader {
  constructor(private readonly segs: { addr: bigint; bytes: Uint8Array }[]) {}
  read(addr: bigint, len: number): Uint8Array {
    for (const s of this.segs) {
      if (addr >= s.addr && addr < s.addr + BigInt(s.bytes.length)) {
        const o = Number(addr - s.addr);
        return s.bytes.subarray(o, Math.min(s.bytes.length, o + len));
      }
    }
    return new Uint8Array(0);
  }
}

export async function decodeRaw(o: { rawPt: string; image: string[]; format?: string }): Promise<void> {
  if (o.format !== 'ptxed')
    throw new UsageError(`--format: only "ptxed" is supported in raw mode, got ${JSON.stringify(o.format)}`);
  if (!o.image.length) throw new UsageError('raw mode needs at least one --image BIN:ADDR');
  const segs = o.image.map((spec) => {
    const i = spec.lastIndexOf(':');
    if (i <= 0) throw new UsageError(`--image ${JSON.stringify(spec)}: expected FILE:ADDR`);
    const addr = BigInt(spec.slice(i + 1));
    return { addr, bytes: new Uint8Array(readFileSync(spec.slice(0, i))) };
  });
  const trace = new Uint8Array(readFileSync(o.rawPt));
  const out = new OutputSink(undefined, { sync: true });
  const sink = ptxedSink((l) => out.line(l));
  const r = decodeFlow({ cpus: [{ cpu: 0, trace }], pokes: [], code: new FlatImage(segs), sink, retCompression: true });
  await out.close();
  process.stderr.write(`${r.errors} instruction trace errors\n`);
}
