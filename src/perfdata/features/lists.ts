import type { ByteReader } from '../../io/byte-reader.js';
import type { ByteWriter } from '../../io/byte-writer.js';
import { decodeEventAttr, encodeEventAttr } from '../event-attr-codec.js';
import { FormatError } from '../../io/errors.js';
import { readCount, readPerfString, readVersion1, writePerfString } from './perf-string.js';
import type { EventDesc, FeatureData } from './types.js';

/**
 * Counted lists: cmdline, event_desc, pmu_mappings, group_desc, cache,
 * cpu_pmu_caps, pmu_caps, hybrid_topology (header.c write_* / process_*).
 * A string costs at least 4 bytes, which bounds every count.
 */

export function decodeCmdline(r: ByteReader): FeatureData {
  const n = readCount(r, 4, 'CMDLINE nr');
  const argv: string[] = [];
  for (let i = 0; i < n; i++) argv.push(readPerfString(r, 'CMDLINE'));
  return { kind: 'cmdline', argv };
}

/** u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, string name, u64 ids[nr_ids]. */
export function decodeEventDesc(r: ByteReader): FeatureData {
  const n = readCount(r, 0, 'EVENT_DESC nr');
  const szAt = r.pos;
  const attrSize = r.u32();
  if (attrSize < 64 || n * (attrSize + 8) > r.remaining) {
    throw new FormatError({
      kind: 'bad-size',
      offset: r.base + szAt,
      structure: 'EVENT_DESC attr_size',
      actual: attrSize,
      expected: `≥ 64 and ${n} events fitting ${r.remaining} bytes`,
    });
  }
  const events: EventDesc[] = [];
  for (let i = 0; i < n; i++) {
    const attr = decodeEventAttr(r, attrSize);
    const nrIds = r.u32();
    const name = readPerfString(r, 'EVENT_DESC name');
    readCount(r, 8, 'EVENT_DESC nr_ids', nrIds);
    const ids: bigint[] = [];
    for (let j = 0; j < nrIds; j++) ids.push(r.u64());
    events.push({ attr, name, ids });
  }
  return { kind: 'event_desc', attrSize, events };
}

export function decodePmuMappings(r: ByteReader): FeatureData {
  const n = readCount(r, 8, 'PMU_MAPPINGS nr');
  const pmus: { type: number; name: string }[] = [];
  for (let i = 0; i < n; i++) {
    const type = r.u32();
    pmus.push({ type, name: readPerfString(r, 'PMU_MAPPINGS name') });
  }
  return { kind: 'pmu_mappings', pmus };
}

export function decodeGroupDesc(r: ByteReader): FeatureData {
  const n = readCount(r, 12, 'GROUP_DESC nr');
  const groups: { name: string; leaderIdx: number; nrMembers: number }[] = [];
  for (let i = 0; i < n; i++) {
    const name = readPerfString(r, 'GROUP_DESC name');
    groups.push({ name, leaderIdx: r.u32(), nrMembers: r.u32() });
  }
  return { kind: 'group_desc', groups };
}

export function decodeCache(r: ByteReader): FeatureData {
  readVersion1(r, 'CACHE version');
  const n = readCount(r, 28, 'CACHE cnt');
  const levels = [];
  for (let i = 0; i < n; i++) {
    const level = r.u32();
    const lineSize = r.u32();
    const sets = r.u32();
    const ways = r.u32();
    const type = readPerfString(r, 'CACHE type');
    const size = readPerfString(r, 'CACHE size');
    levels.push({ level, lineSize, sets, ways, type, size, map: readPerfString(r, 'CACHE map') });
  }
  return { kind: 'cache', version: 1, levels };
}

function readCaps(r: ByteReader, what: string): { name: string; value: string }[] {
  const n = readCount(r, 8, `${what} nr_caps`);
  const caps = [];
  for (let i = 0; i < n; i++) {
    const name = readPerfString(r, what);
    caps.push({ name, value: readPerfString(r, what) });
  }
  return caps;
}

export function decodeCpuPmuCaps(r: ByteReader): FeatureData {
  return { kind: 'cpu_pmu_caps', caps: readCaps(r, 'CPU_PMU_CAPS') };
}

export function decodePmuCaps(r: ByteReader): FeatureData {
  const n = readCount(r, 8, 'PMU_CAPS nr_pmu');
  const pmus = [];
  for (let i = 0; i < n; i++) {
    const caps = readCaps(r, 'PMU_CAPS');
    pmus.push({ caps, pmuName: readPerfString(r, 'PMU_CAPS pmu name') });
  }
  return { kind: 'pmu_caps', pmus };
}

export function decodeHybridTopology(r: ByteReader): FeatureData {
  const n = readCount(r, 8, 'HYBRID_TOPOLOGY nr');
  const nodes = [];
  for (let i = 0; i < n; i++) {
    const pmuName = readPerfString(r, 'HYBRID_TOPOLOGY pmu');
    nodes.push({ pmuName, cpus: readPerfString(r, 'HYBRID_TOPOLOGY cpus') });
  }
  return { kind: 'hybrid_topology', nodes };
}

function writeCaps(w: ByteWriter, caps: { name: string; value: string }[]): void {
  w.u32(caps.length);
  for (const c of caps) {
    writePerfString(w, c.name);
    writePerfString(w, c.value);
  }
}

export function encodeList(f: FeatureData, w: ByteWriter): boolean {
  switch (f.kind) {
    case 'cmdline':
      w.u32(f.argv.length);
      for (const a of f.argv) writePerfString(w, a);
      return true;
    case 'event_desc':
      w.u32(f.events.length).u32(f.attrSize);
      for (const e of f.events) {
        encodeEventAttr(w, e.attr, f.attrSize);
        w.u32(e.ids.length);
        writePerfString(w, e.name);
        for (const id of e.ids) w.u64(id);
      }
      return true;
    case 'pmu_mappings':
      w.u32(f.pmus.length);
      for (const p of f.pmus) {
        w.u32(p.type);
        writePerfString(w, p.name);
      }
      return true;
    case 'group_desc':
      w.u32(f.groups.length);
      for (const g of f.groups) {
        writePerfString(w, g.name);
        w.u32(g.leaderIdx).u32(g.nrMembers);
      }
      return true;
    case 'cache':
      w.u32(f.version).u32(f.levels.length);
      for (const c of f.levels) {
        w.u32(c.level).u32(c.lineSize).u32(c.sets).u32(c.ways);
        writePerfString(w, c.type);
        writePerfString(w, c.size);
        writePerfString(w, c.map);
      }
      return true;
    case 'cpu_pmu_caps':
      writeCaps(w, f.caps);
      return true;
    case 'pmu_caps':
      w.u32(f.pmus.length);
      for (const p of f.pmus) {
        writeCaps(w, p.caps);
        writePerfString(w, p.pmuName);
      }
      return true;
    case 'hybrid_topology':
      w.u32(f.nodes.length);
      for (const n of f.nodes) {
        writePerfString(w, n.pmuName);
        writePerfString(w, n.cpus);
      }
      return true;
    default:
      return false;
  }
}
