import { ByteReader } from '../../io/byte-reader.js';
import { ByteWriter } from '../../io/byte-writer.js';
import { FormatError } from '../../io/errors.js';
import { Feature, featureName } from '../../abi/feature.js';
import * as S from './scalars.js';
import * as L from './lists.js';
import * as T from './topology.js';
import * as B from './build-id.js';
import type { FeatureContext, FeatureData, FeatureKind } from './types.js';

/**
 * One table from feature id to decoder, like perf's feat_ops[]. Features we
 * do not interpret (tracing_data, bpf_prog_info, bpf_btf, ids perf 6.1 does
 * not know) stay raw bytes and are copied through untouched.
 */
type Decoder = (r: ByteReader, ctx: FeatureContext) => FeatureData;

const decoders = new Map<number, Decoder>([
  [Feature.BUILD_ID, (r) => B.decodeBuildIds(r)],
  [Feature.HOSTNAME, (r) => S.decodeStringFeature('hostname', r)],
  [Feature.OSRELEASE, (r) => S.decodeStringFeature('osrelease', r)],
  [Feature.VERSION, (r) => S.decodeStringFeature('version', r)],
  [Feature.ARCH, (r) => S.decodeStringFeature('arch', r)],
  [Feature.NRCPUS, (r) => S.decodeNrcpus(r)],
  [Feature.CPUDESC, (r) => S.decodeStringFeature('cpudesc', r)],
  [Feature.CPUID, (r) => S.decodeStringFeature('cpuid', r)],
  [Feature.TOTAL_MEM, (r) => S.decodeTotalMem(r)],
  [Feature.CMDLINE, (r) => L.decodeCmdline(r)],
  [Feature.EVENT_DESC, (r) => L.decodeEventDesc(r)],
  [Feature.CPU_TOPOLOGY, (r, c) => T.decodeCpuTopology(r, c)],
  [Feature.NUMA_TOPOLOGY, (r) => T.decodeNumaTopology(r)],
  [Feature.BRANCH_STACK, () => ({ kind: 'branch_stack' })],
  [Feature.PMU_MAPPINGS, (r) => L.decodePmuMappings(r)],
  [Feature.GROUP_DESC, (r) => L.decodeGroupDesc(r)],
  [Feature.AUXTRACE, (r) => B.decodeAuxtrace(r)],
  [Feature.STAT, () => ({ kind: 'stat' })],
  [Feature.CACHE, (r) => L.decodeCache(r)],
  [Feature.SAMPLE_TIME, (r) => S.decodeSampleTime(r)],
  [Feature.MEM_TOPOLOGY, (r) => T.decodeMemTopology(r)],
  [Feature.CLOCKID, (r) => S.decodeClockid(r)],
  [Feature.DIR_FORMAT, (r) => S.decodeDirFormat(r)],
  [Feature.COMPRESSED, (r) => S.decodeCompressed(r)],
  [Feature.CPU_PMU_CAPS, (r) => L.decodeCpuPmuCaps(r)],
  [Feature.CLOCK_DATA, (r) => S.decodeClockData(r)],
  [Feature.HYBRID_TOPOLOGY, (r) => L.decodeHybridTopology(r)],
  [Feature.PMU_CAPS, (r) => L.decodePmuCaps(r)],
]);

const idOfKind = new Map<string, number>(Object.entries(Feature).map(([k, v]) => [k.toLowerCase(), v]));

/** The feature id a decoded section belongs to. */
export function featureIdOf(f: FeatureData): number {
  if (f.kind === 'raw') return f.id;
  return idOfKind.get(f.kind)!;
}

/** The `kind` used for a feature id ('raw' when we keep its bytes). */
export function featureKindOf(id: number): FeatureKind {
  return decoders.has(id) ? (featureName(id).toLowerCase() as FeatureKind) : 'raw';
}

/**
 * Decode one feature section. `base` is its file offset (for errors).
 * Throws FormatError naming the feature when the bytes are malformed.
 */
export function decodeFeature(
  id: number,
  bytes: Uint8Array,
  le: boolean,
  base = 0,
  ctx: FeatureContext = {},
): FeatureData {
  const dec = decoders.get(id);
  if (!dec) return { kind: 'raw', id, bytes: bytes.slice() };
  const r = new ByteReader(bytes, le, base, featureName(id));
  try {
    return dec(r, ctx);
  } catch (e) {
    if (e instanceof FormatError && !e.info.structure.startsWith(featureName(id))) {
      throw new FormatError({ ...e.info, structure: `${featureName(id)} feature: ${e.info.structure}` });
    }
    throw e;
  }
}

/** Encode a feature section body in the given byte order. */
export function encodeFeature(f: FeatureData, le: boolean): Uint8Array {
  const w = new ByteWriter(le, 256);
  if (f.kind === 'raw') w.bytes(f.bytes);
  else if (f.kind === 'branch_stack' || f.kind === 'stat') {
    // empty sections: the bit alone says it
  } else if (!(S.encodeScalar(f, w) || L.encodeList(f, w) || T.encodeTopology(f, w) || B.encodeIndexes(f, w))) {
    throw new Error(`encodeFeature: no encoder for ${(f as FeatureData).kind}`);
  }
  return w.finish().slice();
}

/**
 * Features whose raw bytes cannot be re-encoded for the other byte order
 * (we keep them opaque). tracing_data carries its own endianness marker and
 * is safe to copy; bpf sections are not (perf refuses swapped ones, with a warning).
 */
export function canChangeByteOrder(f: FeatureData): boolean {
  if (f.kind !== 'raw') return f.kind !== 'cpu_topology' || !f.tail;
  // perf warns about any byte-swapped bpf section ("not yet supported"), even an empty one
  if (f.id === Feature.BPF_PROG_INFO || f.id === Feature.BPF_BTF) return false;
  return f.id === Feature.TRACING_DATA || f.bytes.every((b) => b === 0);
}
