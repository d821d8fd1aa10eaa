/**
 * KSYMBOL + BPF_EVENT records for the BPF programs already loaded when
 * recording starts, as perf's perf_event__synthesize_bpf_events
 * (tools/perf/util/bpf-event.c) writes them: the kernel only reports loads
 * and unloads that happen while an event is open, so without these a sample
 * in a program loaded earlier has no symbol. The program list comes from
 * bpf(2) in the native addon (Recorder.bpfPrograms()).
 */
import { PERF_BPF_EVENT_PROG_LOAD, PERF_RECORD_KSYMBOL_TYPE_BPF, RecordType } from '../abi/record-type.js';
import { ByteWriter } from '../io/byte-writer.js';
import { sampleId, type SampleIdValues } from './synthesize.js';
import { hexString } from '../io/hex.js';

/** One program as the addon reports it (bpf_prog_info and its arrays). */
export interface BpfProgInfo {
  id: number;
  type: number;
  name: string;
  tag: Uint8Array;
  jitedKsyms: bigint[];
  jitedFuncLens: number[];
  /** 8 bytes per sub-program. */
  progTags: Uint8Array;
  btfId: number;
  funcInfoRecSize: number;
  /** struct bpf_func_info { u32 insn_off; u32 type_id; } per sub-program (funcInfoRecSize apart). */
  funcInfo: Uint8Array;
  /** The program's raw BTF, when it has one and the kernel gave it. */
  btf?: Uint8Array;
}

/** perf 6.1's KSYM_NAME_LEN: synthesize_bpf_prog_name writes at most this minus the NUL. */
const KSYM_NAME_LEN = 128;
const BTF_MAGIC = 0xeb9f;

/** Bytes after the 12-byte btf_type for each BTF kind (vlen = member count). */
function btfExtra(kind: number, vlen: number): number {
  switch (kind) {
    case 1: // INT
    case 14: // VAR
    case 17: // DECL_TAG
      return 4;
    case 3: // ARRAY
      return 12;
    case 4: // STRUCT
    case 5: // UNION
    case 15: // DATASEC
    case 19: // ENUM64
      return 12 * vlen;
    case 6: // ENUM
    case 13: // FUNC_PROTO
      return 8 * vlen;
    default: // PTR, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, FLOAT, TYPE_TAG
      return 0;
  }
}

/**
 * The name of BTF type `typeId` (btf__type_by_id + btf__name_by_offset).
 * Returns undefined when the BTF is not one (bad magic, out of range):
 * perf then gives up on the program.
 */
export function btfTypeName(btf: Uint8Array, typeId: number, le = true): string | undefined {
  if (btf.length < 24) return undefined;
  const dv = new DataView(btf.buffer, btf.byteOffset, btf.byteLength);
  if (dv.getUint16(0, le) !== BTF_MAGIC) return undefined;
  const hdrLen = dv.getUint32(4, le);
  const typeStart = hdrLen + dv.getUint32(8, le);
  const typeEnd = typeStart + dv.getUint32(12, le);
  const strStart = hdrLen + dv.getUint32(16, le);
  const strEnd = strStart + dv.getUint32(20, le);
  if (typeEnd > btf.length || strEnd > btf.length || typeId < 1) return undefined;
  let at = typeStart;
  for (let id = 1; at + 12 <= typeEnd; id++) {
    const nameOff = dv.getUint32(at, le);
    const info = dv.getUint32(at + 4, le);
    if (id === typeId) {
      const from = strStart + nameOff;
      if (from >= strEnd) return undefined;
      const nul = btf.indexOf(0, from);
      return Buffer.from(btf.subarray(from, nul < 0 || nul > strEnd ? strEnd : nul)).toString('utf8');
    }
    at += 12 + btfExtra((info >>> 24) & 0x1f, info & 0xffff);
  }
  return undefined;
}

/**
 * perf's synthesize_bpf_prog_name: `bpf_prog_<tag>` plus `_<name>`, the
 * name being the sub-program's BTF FUNC name, else the program name when it
 * has no sub-programs, else `F`. undefined when the BTF does not name it.
 */
export function bpfProgSymbolName(p: BpfProgInfo, sub: number): string | undefined {
  let name = `bpf_prog_${hexString(p.progTags.subarray(sub * 8, sub * 8 + 8))}`;
  let short: string | undefined;
  if (hasBtfFuncInfo(p)) {
    const at = sub * p.funcInfoRecSize;
    if (!p.btf || at + 8 > p.funcInfo.length) return undefined;
    const typeId = new DataView(p.funcInfo.buffer, p.funcInfo.byteOffset + at, 8).getUint32(4, true);
    short = btfTypeName(p.btf, typeId);
    if (short === undefined) return undefined;
  } else if (sub === 0 && p.jitedKsyms.length === 1) {
    if (p.name !== '') short = p.name;
  } else {
    short = 'F';
  }
  if (short !== undefined) name += `_${short}`;
  return name.slice(0, KSYM_NAME_LEN - 1);
}

function hasBtfFuncInfo(p: BpfProgInfo): boolean {
  return p.btfId !== 0 && p.funcInfo.length > 0 && p.funcInfoRecSize > 0;
}

export interface BpfSynthesis {
  bytes: Uint8Array;
  ksymbol: number;
  bpfEvent: number;
  /** Programs described (perf stops at the first it cannot describe, and so do we). */
  programs: number;
}

/**
 * A KSYMBOL per sub-program (jited address and length) then one BPF_EVENT
 * PROG_LOAD with the program's id and tag, per program, in id order. Like
 * perf, the walk stops at the first program whose arrays disagree or whose
 * BTF does not name a sub-program (perf treats that as an old kernel).
 */
export function synthesizeBpfPrograms(le: boolean, progs: BpfProgInfo[], s: SampleIdValues): BpfSynthesis {
  const w = new ByteWriter(le, 4096);
  let ksymbol = 0;
  let bpfEvent = 0;
  let programs = 0;
  for (const p of progs) {
    const n = p.jitedKsyms.length;
    if (n !== p.jitedFuncLens.length || n * 8 !== p.progTags.length) break;
    if (hasBtfFuncInfo(p) && p.funcInfo.length !== n * p.funcInfoRecSize) break;
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = bpfProgSymbolName(p, i);
      if (name === undefined) break;
      names.push(name);
    }
    if (names.length !== n) break;
    names.forEach((name, i) => {
      const at = w.pos;
      w.u32(RecordType.KSYMBOL).u16(0).u16(0);
      w.u64(p.jitedKsyms[i]!).u32(p.jitedFuncLens[i]!).u16(PERF_RECORD_KSYMBOL_TYPE_BPF).u16(0);
      w.cstring(name, 8);
      sampleId(w, s);
      w.patchU16(at + 6, w.pos - at);
      ksymbol++;
    });
    const at = w.pos;
    w.u32(RecordType.BPF_EVENT).u16(0).u16(0);
    w.u16(PERF_BPF_EVENT_PROG_LOAD).u16(0).u32(p.id).bytes(p.tag.subarray(0, 8));
    sampleId(w, s);
    w.patchU16(at + 6, w.pos - at);
    bpfEvent++;
    programs++;
  }
  return { bytes: w.finish().slice(), ksymbol, bpfEvent, programs };
}
