/**
 * Records perfpoke writes itself before the kernel's, as perf does in
 * perf_event__synthesize_kernel_mmap / _modules: without a kernel MMAP a
 * reader has no kernel map to attach KSYMBOL and TEXT_POKE records to.
 */
import { readFileSync } from 'node:fs';

import { PERF_RECORD_MISC_KERNEL, RecordType } from '../abi/record-type.js';
import { ByteWriter } from '../io/byte-writer.js';

export interface KernelLayout {
  /** Address of `_text` (perf's ref_reloc_sym, written as the MMAP pgoff). */
  text: bigint;
  /** `_etext`, or the highest text symbol seen when it is missing. */
  etext: bigint;
}

export interface ModuleRange {
  name: string;
  start: bigint;
  size: bigint;
}

/**
 * Find _text/_stext/_etext in /proc/kallsyms text. Returns undefined when the
 * addresses are hidden (kptr_restrict shows zeros) or the symbols are absent.
 */
export function kernelLayoutFromKallsyms(kallsyms: string): KernelLayout | undefined {
  let text: bigint | undefined;
  let stext: bigint | undefined;
  let etext: bigint | undefined;
  for (const m of kallsyms.matchAll(/^([0-9a-f]+) [A-Za-z] (_text|_stext|_etext)$/gm)) {
    const v = BigInt(`0x${m[1]}`);
    if (m[2] === '_text') text = v;
    else if (m[2] === '_stext') stext = v;
    else etext = v;
  }
  const start = text ?? stext;
  if (start === undefined || start === 0n || etext === undefined || etext <= start) return undefined;
  return { text: start, etext };
}

/** /proc/modules lines: "name size refcount deps state address". */
export function parseProcModules(text: string): ModuleRange[] {
  const out: ModuleRange[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6) continue;
    const addr = /^0x([0-9a-f]+)$/i.exec(f[5]!);
    if (!addr || !/^\d+$/.test(f[1]!)) continue;
    const start = BigInt(`0x${addr[1]}`);
    if (start === 0n) continue;
    out.push({ name: f[0]!, start, size: BigInt(f[1]!) });
  }
  return out;
}

export interface SampleIdValues {
  /** The IDENTIFIER to stamp: the tracking event's first id, so readers map the record to it. */
  id: bigint;
}

/**
 * sample_id tail for TID|TIME|CPU|IDENTIFIER, zeros except the id (perf's synthesized
 * records are zero-stamped too).
 */
export function sampleId(w: ByteWriter, s: SampleIdValues): void {
  w.u32(0).u32(0).u64(0n).u32(0).u32(0).u64(s.id);
}

function mmapRecord(
  w: ByteWriter,
  pid: number,
  tid: number,
  start: bigint,
  len: bigint,
  pgoff: bigint,
  filename: string,
  s: SampleIdValues,
): void {
  const at = w.pos;
  w.u32(RecordType.MMAP).u16(PERF_RECORD_MISC_KERNEL).u16(0);
  w.i32(pid).i32(tid).u64(start).u64(len).u64(pgoff);
  w.cstring(filename, 8);
  sampleId(w, s);
  w.patchU16(at + 6, w.pos - at);
}

/**
 * The kernel MMAP (`[kernel.kallsyms]_text`, pid -1, pgoff = _text) and one
 * MMAP per module, like `perf record` writes first. Missing or hidden
 * kallsyms gives no records (perf falls back the same way).
 */
export function synthesizeKernelMmaps(
  le: boolean,
  s: SampleIdValues,
  sources = { kallsyms: '/proc/kallsyms', modules: '/proc/modules' },
): { bytes: Uint8Array; records: number } {
  const w = new ByteWriter(le, 1024);
  let records = 0;
  let layout: KernelLayout | undefined;
  try {
    layout = kernelLayoutFromKallsyms(readFileSync(sources.kallsyms, 'utf8'));
  } catch {
    layout = undefined;
  }
  if (layout) {
    mmapRecord(w, -1, 0, layout.text, layout.etext - layout.text, layout.text, '[kernel.kallsyms]_text', s);
    records++;
    let mods: ModuleRange[] = [];
    try {
      mods = parseProcModules(readFileSync(sources.modules, 'utf8'));
    } catch {
      mods = [];
    }
    for (const m of mods) {
      mmapRecord(w, -1, 0, m.start, m.size, 0n, `[${m.name}]`, s);
      records++;
    }
  }
  return { bytes: w.finish().slice(), records };
}
