import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import type { KernelRecordHead, RecordHead } from './common.js';

/** PERF_RECORD_NAMESPACES (16): u32 pid, tid; u64 nr_namespaces; {u64 dev, ino}[nr]. */
export interface NamespacesRecord extends KernelRecordHead {
  kind: 'namespaces';
  pid: number;
  tid: number;
  links: { dev: bigint; ino: bigint }[];
}
export function decodeNamespaces(r: ByteReader, h: RecordHead): NamespacesRecord {
  const pid = r.i32();
  const tid = r.i32();
  const at = r.pos;
  const nr = r.u64n('NAMESPACES (16).nr_namespaces');
  if (nr * 16 > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + at,
      structure: 'NAMESPACES (16).nr_namespaces',
      actual: nr,
      expected: `≤ ${Math.floor(r.remaining / 16)} (record size)`,
    });
  }
  const links = [];
  for (let i = 0; i < nr; i++) links.push({ dev: r.u64(), ino: r.u64() });
  return { kind: 'namespaces', ...h, pid, tid, links };
}
export function encodeNamespaces(rec: NamespacesRecord, w: ByteWriter): void {
  w.i32(rec.pid).i32(rec.tid).u64(rec.links.length);
  for (const l of rec.links) w.u64(l.dev).u64(l.ino);
}
