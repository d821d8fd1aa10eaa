import type { Command } from 'commander';
import { readFile, stat } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import { PerfFile } from '../../perfdata/perf-file.js';
import { RecordType } from '../../abi/record-type.js';
import { UsageError } from '../errors.js';
import { perfDumpLines, ptdumpLines, iteratePackets, LastIp } from '../../intelpt/packets/index.js';
import {
  decodeAuxtracePriv,
  formatIntelPtInfo,
  PERF_AUXTRACE_INTEL_PT,
  type AuxtraceInfo,
} from '../../intelpt/auxtrace-info.js';

/**
 * `perfpoke pt-dump -i FILE`: the Intel PT packets of every AUXTRACE buffer
 * of a perf.data file (or of a raw PT stream with --raw), as perf 6.1's
 * `perf script -D` prints them (default), as Intel's libipt `ptdump` prints
 * them (--format=ptdump), or as JSON lines (--json).
 */
type Format = 'perf' | 'ptdump';

interface Opts {
  input: string;
  raw?: boolean;
  json?: boolean;
  format: string;
}

const hx = (v: bigint | number): string => (v === 0 || v === 0n ? '0' : '0x' + v.toString(16));

function jsonLine(obj: Record<string, unknown>): string {
  return JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? '0x' + v.toString(16) : v));
}

function* bufferLines(
  data: Uint8Array,
  format: Format,
  json: boolean,
  buffer: Record<string, unknown> | undefined,
): Generator<string> {
  if (json) {
    // IP packets also carry the IP after last-IP decompression (libipt pt_last_ip; reset at each PSB)
    const last = new LastIp();
    for (const p of iteratePackets(data)) {
      let extra: { lastIp: bigint | null } | undefined;
      if (p.kind !== 'error') {
        last.apply(p);
        if (p.kind === 'tip' || p.kind === 'tip.pge' || p.kind === 'tip.pgd' || p.kind === 'fup')
          extra = { lastIp: last.query() ?? null };
      } else last.reset();
      yield jsonLine(buffer ? { buffer, ...p, ...extra } : { ...p, ...extra });
    }
  } else if (format === 'ptdump') yield* ptdumpLines(data);
  else yield* perfDumpLines(data);
}

/** Writes lines with back-pressure-free batching (stdout is usually a pipe). */
class Out {
  private buf: string[] = [];
  private n = 0;
  line(s: string): void {
    this.buf.push(s);
    if (++this.n >= 4096) this.flush();
  }
  flush(): void {
    if (this.buf.length) process.stdout.write(this.buf.join('\n') + '\n');
    this.buf = [];
    this.n = 0;
  }
}

async function readAll(path: string): Promise<Uint8Array> {
  if (path !== '-') return new Uint8Array(await readFile(path));
  const parts: Buffer[] = [];
  for await (const c of process.stdin) parts.push(c as Buffer);
  return new Uint8Array(Buffer.concat(parts));
}

async function dumpRaw(path: string, format: Format, json: boolean, out: Out): Promise<void> {
  const data = await readAll(path);
  for (const l of bufferLines(data, format, json, undefined)) out.line(l);
}

async function dumpPerfData(path: string, format: Format, json: boolean, out: Out): Promise<void> {
  const f = await PerfFile.open(path);
  const size = path === '-' ? 0 : (await stat(path)).size;
  const bar =
    process.stderr.isTTY && size > 64 << 20
      ? new SingleBar({ stream: process.stderr, format: 'pt-dump {bar} {percentage}%', clearOnComplete: true })
      : undefined;
  bar?.start(size, 0);
  let info: AuxtraceInfo | undefined;
  try {
    for await (const r of f.records()) {
      bar?.update(r.fileOffset);
      if (r.type === RecordType.AUXTRACE_INFO) {
        const rec = r.decode();
        if (rec.kind !== 'auxtrace_info') continue;
        info = decodeAuxtracePriv(rec.auxType, rec.priv, r.fileOffset);
        if (json) out.line(jsonLine({ kind: 'auxtrace_info', fileOffset: r.fileOffset, ...info }));
        else if (format === 'perf') {
          out.line(
            `0x${r.fileOffset.toString(16)} [0x${r.size.toString(16)}]: PERF_RECORD_AUXTRACE_INFO type: ${rec.auxType}`,
          );
          if (info.type === 'intel_pt') for (const l of formatIntelPtInfo(info)) out.line(l);
          out.line('');
        }
        continue;
      }
      if (r.type !== RecordType.AUXTRACE) continue;
      const rec = r.decode();
      if (rec.kind !== 'auxtrace') continue;
      const data = r.auxData ?? new Uint8Array(0);
      const buffer = {
        fileOffset: r.fileOffset,
        offset: rec.offset,
        size: data.length,
        reference: rec.reference,
        idx: rec.idx,
        tid: rec.tid,
        cpu: rec.cpu,
      };
      const isPt =
        info?.type === 'intel_pt' ||
        (info === undefined ? false : info.type === 'raw' && info.auxType === PERF_AUXTRACE_INTEL_PT);
      if (!json) {
        const head = `0x${r.fileOffset.toString(16)} [0x${r.size.toString(16)}]: PERF_RECORD_AUXTRACE size: ${hx(rec.dataSize)}  offset: ${hx(rec.offset)}  ref: ${hx(rec.reference)}  idx: ${rec.idx}  tid: ${rec.tid}  cpu: ${rec.cpu}`;
        out.line(format === 'ptdump' ? `# ${head}` : head);
      }
      if (!isPt) {
        if (!json)
          out.line(
            `# not Intel PT data (${info ? `AUX type ${info.type === 'raw' ? info.auxType : 1}` : 'no AUXTRACE_INFO before it'}), skipped`,
          );
        continue;
      }
      if (!json && format === 'perf') out.line('.');
      for (const l of bufferLines(data, format, json, buffer)) out.line(l);
      if (!json) out.line('');
    }
  } finally {
    bar?.stop();
    await f.close();
  }
}

export function register(program: Command): void {
  program
    .command('pt-dump')
    .description(
      'print the Intel PT packets of every AUXTRACE buffer, as `perf script -D` (or libipt ptdump) prints them',
    )
    .requiredOption('-i, --input <file>', "perf.data file ('-' for a pipe on stdin), or a raw PT stream with --raw")
    .option('--raw', 'the input is a raw Intel PT stream, not a perf.data file')
    .option('--format <fmt>', 'text format: perf (perf script -D) or ptdump (Intel libipt ptdump)', 'perf')
    .option('--json', 'print one JSON object per packet (u64 values as 0x strings)')
    .action(async (opts: Opts) => {
      if (opts.format !== 'perf' && opts.format !== 'ptdump')
        throw new UsageError(`--format must be perf or ptdump, not ${opts.format}`);
      const out = new Out();
      try {
        if (opts.raw) await dumpRaw(opts.input, opts.format, !!opts.json, out);
        else await dumpPerfData(opts.input, opts.format, !!opts.json, out);
      } finally {
        out.flush();
      }
    });
}
