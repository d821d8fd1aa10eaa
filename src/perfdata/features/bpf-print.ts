import { ByteReader } from '../../io/byte-reader.js';

/**
 * Print BPF_PROG_INFO as perf 6.1 does (bpf-event.c
 * __bpf_event__print_bpf_prog_info). The section is
 *   u32 count; per program: u32 info_len, u32 data_len, u64 arrays,
 *   struct bpf_prog_info info[info_len], u8 data[data_len]
 * with the info's pointer fields turned into offsets into data
 * (bpil_addr_to_offs). perf refuses a byte-swapped section, and so do we.
 *
 * Known difference: when the program has BTF (btf_id ≠ 0) perf names it
 * from the BTF func_info; we print the tag-only name then.
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
  nrProgTags: 180,
  progTags: 184,
};

export function printBpfProgInfo(bytes: Uint8Array, le: boolean): string[] {
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
      const shortName = Buffer.from(info.subarray(OFF.name, OFF.name + (nameEnd < 0 ? 16 : nameEnd))).toString('latin1');
      const progName = (k: number) => {
        const tag = Buffer.from(data.subarray(u64(OFF.progTags) + 8 * k, u64(OFF.progTags) + 8 * k + 8)).toString('hex');
        const sn = n === 1 ? (shortName ? `_${shortName}` : '') : '_F';
        return `bpf_prog_${tag}${sn}`;
      };
      const addr = (k: number) => '0x' + dv.getBigUint64(u64(OFF.jitedKsyms) + 8 * k, true).toString(16);
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
