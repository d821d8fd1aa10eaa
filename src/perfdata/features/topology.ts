import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { readCount, readCount64, readPerfString, readVersion1, writePerfString } from './perf-string.js';
import type { FeatureContext, FeatureData, MemoryNode } from './types.js';

/**
 * cpu_topology, numa_topology and mem_topology (header.c).
 *
 * CPU_TOPOLOGY grew twice; a reader tells the parts apart by the section size:
 *   u32 nr; string sibling_sockets[nr]; u32 nr; string sibling_threads[nr];
 *   [ {u32 core_id, u32 socket_id}[nr_cpus_avail] ]          (perf ≥ 4.1)
 *   [ u32 nr; string sibling_dies[nr]; u32 die_id[nr_cpus_avail] ]  (perf ≥ 5.2)
 * nr_cpus_avail comes from the NRCPUS section.
 */
export function decodeCpuTopology(r: ByteReader, ctx: FeatureContext): FeatureData {
  const cores: string[] = [];
  const threads: string[] = [];
  for (let i = 0, n = readCount(r, 4, 'CPU_TOPOLOGY nr sockets'); i < n; i++)
    cores.push(readPerfString(r, 'CPU_TOPOLOGY'));
  for (let i = 0, n = readCount(r, 4, 'CPU_TOPOLOGY nr threads'); i < n; i++)
    threads.push(readPerfString(r, 'CPU_TOPOLOGY'));
  const f: FeatureData & { kind: 'cpu_topology' } = { kind: 'cpu_topology', cores, threads };
  if (r.remaining === 0) return f;
  const nrCpus = ctx.nrCpusAvail;
  if (nrCpus === undefined) {
    f.tail = r.copy(r.remaining);
    return f;
  }
  readCount(r, 8, 'CPU_TOPOLOGY cpus (nr_cpus_avail)', nrCpus);
  f.cpus = [];
  for (let i = 0; i < nrCpus; i++) {
    const coreId = r.u32();
    f.cpus.push({ coreId, socketId: r.u32() });
  }
  if (r.remaining === 0) return f;
  f.dies = [];
  for (let i = 0, n = readCount(r, 4, 'CPU_TOPOLOGY nr dies'); i < n; i++)
    f.dies.push(readPerfString(r, 'CPU_TOPOLOGY'));
  readCount(r, 4, 'CPU_TOPOLOGY die ids (nr_cpus_avail)', nrCpus);
  f.dieIds = [];
  for (let i = 0; i < nrCpus; i++) f.dieIds.push(r.u32());
  return f;
}

export function decodeNumaTopology(r: ByteReader): FeatureData {
  const n = readCount(r, 24, 'NUMA_TOPOLOGY nr');
  const nodes = [];
  for (let i = 0; i < n; i++) {
    const node = r.u32();
    const memTotal = r.u64();
    const memFree = r.u64();
    nodes.push({ node, memTotal, memFree, cpus: readPerfString(r, 'NUMA_TOPOLOGY cpus') });
  }
  return { kind: 'numa_topology', nodes };
}

/**
 *   u64 version (1); u64 block_size_bytes; u64 nr;
 *   per node: u64 node; u64 size; then the bitmap: u64 nbits; u64 words[ceil(nbits/64)]
 */
export function decodeMemTopology(r: ByteReader): FeatureData {
  readVersion1(r, 'MEM_TOPOLOGY version', true);
  const blockSize = r.u64();
  const n = readCount64(r, 24, 'MEM_TOPOLOGY nr');
  const nodes: MemoryNode[] = [];
  for (let i = 0; i < n; i++) {
    const node = r.u64();
    const size = r.u64();
    const bitsAt = r.pos;
    const bits = r.u64();
    const nWords = (bits + 63n) / 64n;
    if (nWords * 8n > BigInt(r.remaining)) {
      throw new FormatError({
        kind: 'bad-size',
        offset: r.base + bitsAt,
        structure: 'MEM_TOPOLOGY bitmap size',
        actual: bits,
        expected: `a bitmap fitting ${r.remaining} bytes`,
      });
    }
    const words: bigint[] = [];
    for (let j = 0n; j < nWords; j++) words.push(r.u64());
    nodes.push({ node, size, bits, words });
  }
  return { kind: 'mem_topology', version: 1n, blockSize, nodes };
}

export function encodeTopology(f: FeatureData, w: ByteWriter): boolean {
  switch (f.kind) {
    case 'cpu_topology':
      w.u32(f.cores.length);
      for (const s of f.cores) writePerfString(w, s);
      w.u32(f.threads.length);
      for (const s of f.threads) writePerfString(w, s);
      if (f.tail) {
        w.bytes(f.tail);
        return true;
      }
      for (const c of f.cpus ?? []) w.u32(c.coreId).u32(c.socketId);
      if (f.dies) {
        w.u32(f.dies.length);
        for (const s of f.dies) writePerfString(w, s);
        for (const d of f.dieIds ?? []) w.u32(d);
      }
      return true;
    case 'numa_topology':
      w.u32(f.nodes.length);
      for (const n of f.nodes) {
        w.u32(n.node).u64(n.memTotal).u64(n.memFree);
        writePerfString(w, n.cpus);
      }
      return true;
    case 'mem_topology':
      w.u64(f.version).u64(f.blockSize).u64(f.nodes.length);
      for (const n of f.nodes) {
        w.u64(n.node).u64(n.size).u64(n.bits);
        for (const x of n.words) w.u64(x);
      }
      return true;
    default:
      return false;
  }
}
