import type { Command } from 'commander';
import { readFileSync, writeSync } from 'node:fs';
import { loadPtRecording } from '../../intelpt/flow/recording.js';
import { decodeFlow, type FlowCodeReader, type FlowResult } from '../../intelpt/flow/decode.js';
import type { FlowError, FlowSink } from '../../intelpt/flow/cpu-flow.js';
import { tscToPerfTime, type PtTimeConv } from '../../intelpt/flow/time-conv.js';
import type { Insn } from '../../x86/block-cache.js';
import { UsageError } from '../errors.js';
import { codeImageWarnings } from '../../machine/code-warnings.js';

/**
 * `perfpoke decode -i DIR`: decode the intel_pt trace of a recording over
 * its code image and text pokes; print instructions (`--itrace=i`), branches
 * (`b`) and trace errors (`e`) in perf script's formats, and the
 * `N instruction trace errors` summary. Raw mode (`--raw-pt`) decodes a bare
 * PT stream over flat images, printing what libipt's `ptxed --no-inst` prints.
 */

/** Buffered stdout: decode output is large; lines go into one big buffer, written in chunks; EPIPE stops quietly. */
class Out {
  private buf = Buffer.allocUnsafe(1 << 22);
  private pos = 0;
  closed = false;
  line(s: string): void {
    if (this.closed) return;
    if (this.pos + s.length * 3 + 1 > this.buf.length) {
      this.flush();
      if (s.length * 3 + 1 > this.buf.length) this.buf = Buffer.allocUnsafe(s.length * 3 + 1);
    }
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.buf[this.pos++] = 10;
  }
  flush(): void {
    if (this.closed) return;
    const b = this.buf;
    let off = 0;
    while (off < this.pos) {
      try {
        off += writeSync(1, b, off, this.pos - off);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          this.closed = true;
          break;
        }
        // A non-blocking pipe is full: wait a little and write the rest.
        if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        else throw e;
      }
    }
    this.pos = 0;
  }
}

/** Each cached instruction's address, formatted once (blocks are reused from the cache). */
const HEX = Symbol('hex16');
function insnHex(insn: Insn): string {
  const c = insn as Insn & { [HEX]?: string };
  return (c[HEX] ??= insn.ip.toString(16).padStart(16, ' '));
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16, ' ');

/** perf script's time column: "%5lu.%06lu:" (µs). */
function perfTimeField(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const us = (ns % 1_000_000_000n) / 1000n;
  return `${s.toString().padStart(5, ' ')}.${us.toString().padStart(6, '0')}:`;
}

/** perf's error line (perf_event__fprintf_auxtrace_error). */
export function perfErrorLine(e: FlowError, tc: PtTimeConv | undefined): string {
  // Timeless decoding: perf prints "time 0".
  const time = tc ? ` time ${formatNs(tscToPerfTime(e.estTsc, tc))}` : ' time 0';
  return ` instruction trace error type 1${time} cpu ${e.cpu} pid -1 tid -1 ip 0x${e.ip.toString(16)} code ${e.code}: ${e.message}`;
}

function formatNs(ns: bigint): string {
  return `${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
}

interface DecodeCliOptions {
  input?: string;
  itrace: string;
  fields?: string;
  cpu?: string;
  json?: boolean;
  rawPt?: string;
  image: string[];
  format?: string;
}

export function register(program: Command): void {
  program
    .command('decode')
    .description(
      'decode an intel_pt recording (perf --kcore directory) over its code image and text pokes, like perf script --itrace',
    )
    .option('-i, --input <dir>', 'recording: a perf record --kcore directory (or perf.data)')
    .option('--itrace <spec>', 'what to print: i (instructions), b (branches), e (errors); e.g. "e", "ie"', 'e')
    .option('-F, --fields <list>', 'fields for i/b lines: cpu,time,ip,addr (perf script -F)')
    .option('--cpu <n>', 'only this CPU')
    .option('--json', 'print a JSON summary (counts per CPU, errors) instead of lines')
    .option('--raw-pt <file>', 'raw mode: a bare Intel PT stream (as ptxed --pt)')
    .option(
      '--image <bin:addr>',
      'raw mode: flat code image loaded at addr (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--format <fmt>', 'raw mode output: ptxed (ptxed --no-inst)', 'ptxed')
    .action(async (o: DecodeCliOptions) => {
      if (o.rawPt) return rawMode(o);
      if (!o.input) throw new UsageError('decode: -i DIR (or --raw-pt FILE) is required');
      const spec = o.itrace.replace(/[0-9]+[a-z]*s?$/, '');
      for (const ch of spec)
        if (!'ibe'.includes(ch)) throw new UsageError(`--itrace: unsupported letter "${ch}" (use i, b, e)`);
      const wantI = spec.includes('i');
      const wantB = spec.includes('b');
      const wantE = spec.includes('e') || (!wantI && !wantB);
      const fields = (o.fields ?? (wantB ? 'cpu,ip,addr' : 'cpu,ip')).split(',').map((f) => f.trim());
      for (const f of fields)
        if (!['cpu', 'time', 'ip', 'addr'].includes(f))
          throw new UsageError(`-F: unsupported field "${f}" (cpu, time, ip, addr)`);
      const onlyCpu = o.cpu === undefined ? undefined : Number(o.cpu);
      const rec = await loadPtRecording(o.input);
      const tc = rec.timeConv;
      const out = new Out();
      const errors: FlowError[] = [];
      const prefixes = new Map<number, string>();
      const wantTime = fields.includes('time') && tc !== undefined;
      const start = (cpu: number, tsc: bigint): string => {
        if (!wantTime) {
          let p = prefixes.get(cpu);
          if (p === undefined)
            prefixes.set(cpu, (p = fields.includes('cpu') ? `[${String(cpu).padStart(3, '0')}] ` : ''));
          return p;
        }
        let s = '';
        if (fields.includes('cpu')) s += `[${String(cpu).padStart(3, '0')}] `;
        if (fields.includes('time') && tc) s += `${perfTimeField(tscToPerfTime(tsc, tc))} `;
        return s;
      };
      const json = !!o.json;
      const sink: FlowSink = {
        error: (e) => {
          if (onlyCpu !== undefined && e.cpu !== onlyCpu) return;
          errors.push(e);
          if (wantE && !json) out.line(perfErrorLine(e, tc));
        },
      };
      if (wantI && !json) {
        const showIp = fields.includes('ip');
        sink.insns = (cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint) => {
          if (onlyCpu !== undefined && cpu !== onlyCpu) return;
          const pre = start(cpu, tsc);
          if (!showIp) {
            for (let i = from; i < to; i++) out.line(pre.trimEnd());
            return;
          }
          const p2 = pre + ' ';
          for (let i = from; i < to; i++) out.line(p2 + insnHex(insns[i]!));
        };
      }
      if (wantB && !json) {
        sink.branch = (cpu, from, to, _kind, tsc) => {
          if (onlyCpu !== undefined && cpu !== onlyCpu) return;
          let s = start(cpu, tsc);
          if (fields.includes('ip')) s += ` ${hex16(from)}`;
          if (fields.includes('addr')) s += ` => ${hex16(to)}`;
          out.line(s);
        };
      }
      const cpus = onlyCpu === undefined ? rec.cpus : rec.cpus.filter((c) => c.cpu === onlyCpu);
      const t0 = performance.now();
      const r: FlowResult = decodeFlow({
        cpus,
        pokes: rec.pokes,
        code: rec.machine.image,
        timeConv: tc,
        retCompression: rec.retCompression,
        sink,
      });
      const secs = (performance.now() - t0) / 1000;
      for (const w of codeImageWarnings(rec.machine, { pmuType: rec.pmuType, errorIps: errors.map((e) => e.ip) }))
        process.stderr.write(`perfpoke decode: warning: ${w}\n`);
      if (json) {
        out.line(
          JSON.stringify(
            {
              input: o.input,
              timed: !!tc,
              pokes: rec.pokes.length,
              instructions: r.instructions,
              errors: r.errors,
              seconds: Number(secs.toFixed(3)),
              perCpu: r.perCpu,
              errorList: errors.map((e) => ({
                cpu: e.cpu,
                code: e.code,
                message: e.message,
                reason: e.reason,
                ip: `0x${e.ip.toString(16)}`,
                time: tc ? tscToPerfTime(e.estTsc, tc).toString() : null,
                tsc: e.tsc.toString(),
                offset: e.offset,
                auxBuffer: bufferOf(rec.cpus.find((c) => c.cpu === e.cpu)?.buffers ?? [], e.offset),
              })),
            },
            null,
            1,
          ),
        );
      }
      out.flush();
      if (!json) process.stderr.write(`${r.errors} instruction trace errors\n`);
    });
}

function bufferOf(
  bufs: { fileOffset: number; start: number; size: number }[],
  off: number,
): { fileOffset: number; offset: number } | null {
  for (const b of bufs)
    if (off >= b.start && off < b.start + b.size) return { fileOffset: b.fileOffset, offset: off - b.start };
  return null;
}

/** Flat images for raw mode: a sorted list of (addr, bytes). */
class FlatImage implements FlowCodeReader {
  constructor(private readonly segs: { addr: bigint; bytes: Uint8Array }[]) {}
  read(addr: bigint, len: number): Uint8Array {
    for (const s of this.segs) {
      if (addr >= s.addr && addr < s.addr + BigInt(s.bytes.length)) {
        const o = Number(addr - s.addr);
        return s.bytes.subarray(o, Math.min(s.bytes.length, o + len));
      }
    }
    return new Uint8Array(0);
  }
}

function rawMode(o: DecodeCliOptions): void {
  if (o.format !== 'ptxed')
    throw new UsageError(`--format: only "ptxed" is supported in raw mode, got ${JSON.stringify(o.format)}`);
  if (!o.image.length) throw new UsageError('raw mode needs at least one --image BIN:ADDR');
  const segs = o.image.map((spec) => {
    const i = spec.lastIndexOf(':');
    if (i <= 0) throw new UsageError(`--image ${JSON.stringify(spec)}: expected FILE:ADDR`);
    const addr = BigInt(spec.slice(i + 1));
    return { addr, bytes: new Uint8Array(readFileSync(spec.slice(0, i))) };
  });
  const trace = new Uint8Array(readFileSync(o.rawPt!));
  const out = new Out();
  const sink: FlowSink = {
    insns: (_cpu, insns, from, to) => {
      for (let i = from; i < to; i++) out.line(insns[i]!.ip.toString(16).padStart(16, '0'));
    },
    event: (_cpu, what) => {
      switch (what) {
        case 'enabled':
          out.line('[enabled]');
          break;
        case 'disabled':
          out.line('[disabled]');
          break;
        case 'overflow':
          out.line('[overflow]');
          break;
        case 'interrupt':
          out.line('[interrupt]');
          break;
        case 'exec-mode-64':
          out.line('[exec mode: 64-bit]');
          break;
        default:
          break;
      }
    },
    error: (e) => out.line(`[${e.offset.toString(16)}, ${e.ip.toString(16)}: error: ${e.reason}]`),
  };
  const r = decodeFlow({ cpus: [{ cpu: 0, trace }], pokes: [], code: new FlatImage(segs), sink, retCompression: true });
  out.flush();
  process.stderr.write(`${r.errors} instruction trace errors\n`);
}
