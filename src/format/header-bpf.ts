import { ByteReader } from '../io/byte-reader.js';

/**
 * Print BPF_PROG_INFO as perf 6.1 does (bpf-event.c
 * __bpf_event__print_bpf_prog_info). The section is
 *   u32 count; per program: u32 info_len, u32 data_len, u64 arrays,
 *   struct bpf_prog_info info[info_len], u8 data[data_len]
 * with the info's pointer fields turned into offsets into data
 * (bpil_addr_to_offs). perf refuses a byte-swapped section, and so do we.
 *
 * With BTF (btf_id ≠ 0 and that id in BPF_BTF) the short name of each
 * sub-program is its BTF FUNC's name, found through func_info, as perf's
 * synthesize_bpf_prog_name does with libbpf.
 */
const OFF = {
  id: 4,
  tag: 8,
  name: 64,
  nrJitedKsyms: 104,
  nrJitedFuncLens: 108,
  jitedKsyms: 112,
  jitedFuncLens: 120,
  btfId: 128,
  funcInfoRecSize: 132,
  funcInfo: 136,
  nrProgTags: 180,
  progTags: 184,
};

export function printBpfProgInfo(bytes: Uint8Array, le: boolean, btfs: Map<number, Uint8Array> = new Map()): string[] {
  if (!le || bytes.length < 4) return [];
  const out: string[] = [];
  try {
    const r = new ByteReader(bytes, le, 0, 'BPF_PROG_INFO');
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const infoLen = r.u32();
      const dataLen = r.u32();
      r.u64();
      const info = new Uint8Array(232);
      info.set(r.borrow(infoLen).subarray(0, 232));
      const data = r.borrow(dataLen);
      const iv = new DataView(info.buffer);
      const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
      const u32 = (o: number) => iv.getUint32(o, true);
      const u64 = (o: number) => Number(iv.getBigUint64(o, true));
      const n = u32(OFF.nrJitedKsyms);
      if (n !== u32(OFF.nrProgTags) || n !== u32(OFF.nrJitedFuncLens)) continue;
      const id = u32(OFF.id);
      const nameEnd = info.subarray(OFF.name, OFF.name + 16).indexOf(0);
      const shortName = Buffer.from(info.subarray(OFF.name, OFF.name + (nameEnd < 0 ? 16 : nameEnd))).toString(
        'latin1',
      );
      const btfData = u32(OFF.btfId) ? btfs.get(u32(OFF.btfId)) : undefined;
      const btf = btfData ? parseBtfNames(btfData) : undefined;
      const progName = (k: number) => {
        const tag = Buffer.from(data.subarray(u64(OFF.progTags) + 8 * k, u64(OFF.progTags) + 8 * k + 8)).toString(
          'hex',
        );
        let sn: string;
        if (btf) {
          const typeId = dv.getUint32(u64(OFF.funcInfo) + k * u32(OFF.funcInfoRecSize) + 4, true);
          sn = `_${btf(typeId)}`;
        } else sn = n === 1 ? (shortName ? `_${shortName}` : '') : '_F';
        return `bpf_prog_${tag}${sn}`;
      };
      const addr = (k: number) => `0x${dv.getBigUint64(u64(OFF.jitedKsyms) + 8 * k, true).toString(16)}`;
      const len = (k: number) => dv.getUint32(u64(OFF.jitedFuncLens) + 4 * k, true);
      if (n === 1) out.push(`# bpf_prog_info ${id}: ${progName(0)} addr ${addr(0)} size ${len(0)}`);
      else {
        out.push(`# bpf_prog_info ${id}:`);
        for (let k = 0; k < n; k++) out.push(`# \tsub_prog ${k}: ${progName(k)} addr ${addr(k)} size ${len(k)}`);
      }
    }
  } catch {
    // perf prints what it could read; a broken section ends the list
  }
  return out;
}

/** The BTF sections of a BPF_BTF feature by id (little-endian files only, as perf). */
export function btfById(bytes: Uint8Array | undefined): Map<number, Uint8Array> {
  const m = new Map<number, Uint8Array>();
  if (!bytes || bytes.length < 4) return m;
  try {
    const r = new ByteReader(bytes, true, 0, 'BPF_BTF');
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const id = r.u32();
      m.set(id, r.borrow(r.u32()));
    }
  } catch {
    // keep what was read
  }
  return m;
}

/** Bytes of kind-specific data after each btf_type (uapi btf.h), by kind, given vlen. */
const BTF_EXTRA: Record<number, (vlen: number) => number> = {
  1: () => 4, // INT
  3: () => 12, // ARRAY
  4: (v) => 12 * v, // STRUCT
  5: (v) => 12 * v, // UNION
  6: (v) => 8 * v, // ENUM
  13: (v) => 8 * v, // FUNC_PROTO
  14: () => 4, // VAR
  15: (v) => 12 * v, // DATASEC
  17: () => 4, // DECL_TAG
  19: (v) => 12 * v, // ENUM64
};

/**
 * A minimal BTF reader: type id → name (libbpf btf__type_by_id +
 * btf__name_by_offset). Returns undefined when the blob is not BTF, so the
 * caller falls back like perf does when btf__new fails.
 */
export function parseBtfNames(b: Uint8Array): ((id: number) => string) | undefined {
  try {
    const r = new ByteReader(b, true, 0, 'BTF');
    if (r.u16() !== 0xeb9f) return undefined;
    r.u8();
    r.u8();
    const hdrLen = r.u32();
    const typeOff = r.u32();
    const typeLen = r.u32();
    const strOff = r.u32();
    const strLen = r.u32();
    const types = new ByteReader(b.subarray(hdrLen + typeOff, hdrLen + typeOff + typeLen), true, 0, 'BTF types');
    const strs = b.subarray(hdrLen + strOff, hdrLen + strOff + strLen);
    const nameOffs = [0];
    while (types.remaining >= 12) {
      const nameOff = types.u32();
      const info = types.u32();
      types.u32();
      const kind = (info >>> 24) & 0x1f;
      types.skip(BTF_EXTRA[kind]?.(info & 0xffff) ?? 0);
      nameOffs.push(nameOff);
    }
    return (id) => {
      const off = nameOffs[id];
      if (off === undefined || off >= strs.length) return '';
      const end = strs.indexOf(0, off);
      return Buffer.from(strs.subarray(off, end < 0 ? strs.length : end)).toString('latin1');
    };
  } catch {
    return undefined;
  }
}

/** BPF_BTF: u32 count; per node: u32 id, u32 data_size, data. perf prints "# btf info of id N". */
export function printBpfBtf(bytes: Uint8Array, le: boolean): string[] {
  if (!le || bytes.length < 4) return [];
  const out: string[] = [];
  try {
    const r = new ByteReader(bytes, le, 0, 'BPF_BTF');
    const count = r.u32();
    for (let i = 0; i < count; i++) {
      const id = r.u32();
      r.skip(r.u32());
      out.push(`# btf info of id ${id}`);
    }
  } catch {
    // as above
  }
  return out;
}
