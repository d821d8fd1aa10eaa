/**
 * The Intel PT packets of AUXTRACE buffers as text: perf 6.1's
 * `perf script -D` listing (intel_pt_dump), libipt's `ptdump`, or JSON Lines
 * (`packet` objects, IP packets with the IP after last-IP decompression as
 * libipt's pt_last_ip gives it, reset at each PSB).
 */
import { RecordType } from '../abi/record-type.js';
import type { PerfFile } from '../perfdata/perf-file.js';
import { toJsonValue } from '../perfdata/jsonl-values.js';
import { iteratePackets, LastIp } from '../intelpt/packets/index.js';
import { perfDumpLines } from './pt-packets-perf.js';
import { ptdumpLines, ptdumpPreamble, type PtdumpOptions } from './pt-packets-ptdump.js';
import {
  decodeAuxtracePriv,
  formatIntelPtInfo,
  PERF_AUXTRACE_INTEL_PT,
  type AuxtraceInfo,
} from '../intelpt/auxtrace-info.js';
import { jsonHex, jsonLine } from './json-lines.js';

export type PtDumpFormat = 'perf' | 'ptdump' | 'json';

/** C's "%#lx": 0 prints as "0". */
const hx = (v: bigint | number): string => (v === 0 || v === 0n ? '0' : `0x${v.toString(16)}`);

/** Where a packet's buffer sits in the perf.data file (JSON: `buffer_offset`, the AUXTRACE record's offset). */
interface BufferPlace {
  buffer_offset: number;
  cpu: number;
}

/** The lines (no newline) for one buffer of PT data. */
export function* ptBufferLines(
  data: Uint8Array,
  format: PtDumpFormat,
  place?: BufferPlace,
  ptdump: PtdumpOptions = {},
): Generator<string> {
  if (format === 'ptdump') return yield* ptdumpLines(data, ptdump);
  if (format === 'perf') return yield* perfDumpLines(data);
  const last = new LastIp();
  for (const p of iteratePackets(data)) {
    let lastIp: { last_ip: string | null } | undefined;
    if (p.kind !== 'error') {
      last.apply(p);
      if (p.kind === 'tip' || p.kind === 'tip.pge' || p.kind === 'tip.pgd' || p.kind === 'fup') {
        const ip = last.query();
        lastIp = { last_ip: ip === undefined ? null : jsonHex(ip) };
      }
    } else last.reset();
    const fields = toJsonValue(p) as Record<string, unknown>;
    yield jsonLine({ type: 'packet', ...place, ...fields, ...lastIp }).slice(0, -1);
  }
}

/**
 * Every AUXTRACE buffer of a perf.data file, with the AUXTRACE_INFO and
 * AUXTRACE record lines perf prints around them (ptdump format: as `#`
 * comments; JSON: `auxtrace_info` and `auxtrace` objects). `ptdump`: ptdump's
 * options, applied to each buffer afresh (its errata line printed once, first).
 */
export async function* ptDumpFileLines(
  f: PerfFile,
  format: PtDumpFormat,
  onRecord?: (fileOffset: number) => void,
  ptdump: PtdumpOptions = {},
): AsyncGenerator<string> {
  let info: AuxtraceInfo | undefined;
  const json = format === 'json';
  if (format === 'ptdump') yield* ptdumpPreamble(ptdump);
  for await (const r of f.records()) {
    onRecord?.(r.fileOffset);
    if (r.type === RecordType.AUXTRACE_INFO) {
      const rec = r.decode();
      if (rec.kind !== 'auxtrace_info') continue;
      info = decodeAuxtracePriv(rec.auxType, rec.priv, r.fileOffset);
      if (json) {
        const { type: auxKind, ...fields } = toJsonValue(info) as { type: string } & Record<string, unknown>;
        yield jsonLine({ type: 'auxtrace_info', offset: r.fileOffset, aux_kind: auxKind, ...fields }).slice(0, -1);
      } else if (format === 'perf') {
        const at = `0x${r.fileOffset.toString(16)} [0x${r.size.toString(16)}]`;
        yield `${at}: PERF_RECORD_AUXTRACE_INFO type: ${rec.auxType}`;
        if (info.type === 'intel_pt') yield* formatIntelPtInfo(info);
        yield '';
      }
      continue;
    }
    if (r.type !== RecordType.AUXTRACE) continue;
    const rec = r.decode();
    if (rec.kind !== 'auxtrace') continue;
    const data = r.auxData ?? new Uint8Array(0);
    const isPt =
      info?.type === 'intel_pt' ||
      (info === undefined ? false : info.type === 'raw' && info.auxType === PERF_AUXTRACE_INTEL_PT);
    if (json) {
      yield jsonLine({
        type: 'auxtrace',
        offset: r.fileOffset,
        aux_offset: jsonHex(rec.offset),
        size: data.length,
        reference: jsonHex(rec.reference),
        idx: rec.idx,
        tid: rec.tid,
        cpu: rec.cpu,
        intel_pt: isPt,
      }).slice(0, -1);
    } else {
      const head =
        `0x${r.fileOffset.toString(16)} [0x${r.size.toString(16)}]: PERF_RECORD_AUXTRACE size: ` +
        `${hx(rec.dataSize)}  offset: ${hx(rec.offset)}  ref: ${hx(rec.reference)}  idx: ${rec.idx}  tid: ` +
        `${rec.tid}  cpu: ${rec.cpu}`;
      yield format === 'ptdump' ? `# ${head}` : head;
    }
    if (!isPt) {
      if (!json) {
        const why = info ? `AUX type ${info.type === 'raw' ? info.auxType : 1}` : 'no AUXTRACE_INFO before it';
        yield `# not Intel PT data (${why}), skipped`;
      }
      continue;
    }
    if (format === 'perf') yield '.';
    const place = json ? { buffer_offset: r.fileOffset, cpu: rec.cpu } : undefined;
    yield* ptBufferLines(data, format, place, { ...ptdump, noPreamble: true });
    if (!json) yield '';
  }
}
