/**
 * Decoded Intel PT flow as text: perf 6.1's `perf script --itrace` lines
 * (instructions `i`, branches `b`, trace errors `e`:
 * perf_event__fprintf_auxtrace_error) and the JSON Lines report of a decode. Each builder returns a
 * FlowSink that writes lines through `line` as the decoder walks.
 */
import type { FlowError, FlowSink } from '../intelpt/flow/cpu-flow.js';
import type { FlowResult } from '../intelpt/flow/decode.js';
import { tscToPerfTime, type PtTimeConv } from '../intelpt/flow/time-conv.js';
import type { Insn } from '../x86/block-cache.js';
import { formatNsTime, formatPerfTime } from '../machine/time-format.js';
import { jsonHex, jsonLine, jsonTime } from './json-lines.js';
import { hex16 } from '../io/hex.js';

export const ITRACE_FIELDS = ['cpu', 'time', 'ip', 'addr'] as const;
export type ItraceField = (typeof ITRACE_FIELDS)[number];

/** perf's error line (perf_event__fprintf_auxtrace_error). */
export function perfErrorLine(
  e: FlowError,
  tc: PtTimeConv | undefined,
  task: { pid: number; tid: number } = { pid: -1, tid: -1 },
): string {
  // Timeless decoding: perf prints "time 0".
  const time = tc ? ` time ${formatNsTime(tscToPerfTime(e.estTsc, tc))}` : ' time 0';
  return (
    ` instruction trace error type 1${time} cpu ${e.cpu} pid ${task.pid} tid ${task.tid} ` +
    `ip 0x${e.ip.toString(16)} code ` +
    `${e.code}: ${e.message}`
  );
}

/** Each cached instruction's address, formatted once (blocks are reused from the cache). */
const HEX = Symbol('hex16');
function insnHex(insn: Insn): string {
  const c = insn as Insn & { [HEX]?: string };
  c[HEX] ??= insn.ip.toString(16).padStart(16, ' ');
  return c[HEX];
}

export interface ItraceOptions {
  instructions: boolean;
  branches: boolean;
  errors: boolean;
  fields: readonly ItraceField[];
  /** Only this CPU's lines (and errors). */
  cpu?: number;
  timeConv?: PtTimeConv;
}

/**
 * A sink printing perf script's itrace lines. Every error (of the chosen
 * CPU) is also pushed on `errors`, printed or not.
 */
export function itraceSink(o: ItraceOptions, line: (s: string) => void, errors: FlowError[] = []): FlowSink {
  const { fields, cpu: onlyCpu, timeConv: tc } = o;
  const prefixes = new Map<number, string>();
  const wantTime = fields.includes('time') && tc !== undefined;
  const start = (cpu: number, tsc: bigint): string => {
    if (!wantTime) {
      let p = prefixes.get(cpu);
      if (p === undefined) {
        p = fields.includes('cpu') ? `[${String(cpu).padStart(3, '0')}] ` : '';
        prefixes.set(cpu, p);
      }
      return p;
    }
    let s = '';
    if (fields.includes('cpu')) s += `[${String(cpu).padStart(3, '0')}] `;
    // perf script's time column: "%5lu.%06lu:"
    if (tc) s += `${formatPerfTime(tscToPerfTime(tsc, tc)).padStart(12, ' ')}: `;
    return s;
  };
  const sink: FlowSink = {
    error: (e) => {
      if (onlyCpu !== undefined && e.cpu !== onlyCpu) return;
      errors.push(e);
      if (o.errors) line(perfErrorLine(e, tc));
    },
  };
  if (o.instructions) {
    const showIp = fields.includes('ip');
    sink.insns = (cpu: number, insns: readonly Insn[], from: number, to: number, tsc: bigint) => {
      if (onlyCpu !== undefined && cpu !== onlyCpu) return;
      const pre = start(cpu, tsc);
      if (!showIp) {
        for (let i = from; i < to; i++) line(pre.trimEnd());
        return;
      }
      const p2 = `${pre} `;
      for (let i = from; i < to; i++) line(p2 + insnHex(insns[i]!));
    };
  }
  if (o.branches) {
    sink.branch = (cpu, from, to, _kind, tsc) => {
      if (onlyCpu !== undefined && cpu !== onlyCpu) return;
      let s = start(cpu, tsc);
      if (fields.includes('ip')) s += ` ${hex16(from)}`;
      if (fields.includes('addr')) s += ` => ${hex16(to)}`;
      line(s);
    };
  }
  return sink;
}

/** Where an error's trace offset falls among a CPU's AUXTRACE buffers. */
export interface AuxBufferPlace {
  fileOffset: number;
  start: number;
  size: number;
}

/**
 * The JSON Lines report of a decode: one `decode_error` per error, one
 * `decode_cpu` per CPU, then the `decode_summary` (docs/json/*.schema.json).
 */
export function* decodeJsonLines(
  r: FlowResult,
  errors: readonly (FlowError & { pid?: number; tid?: number })[],
  info: {
    input: string;
    pokes: number;
    seconds: number;
    timeConv: PtTimeConv | undefined;
    buffers: (cpu: number) => readonly AuxBufferPlace[];
  },
): Generator<string> {
  const tc = info.timeConv;
  for (const e of errors) {
    const b = info.buffers(e.cpu).find((x) => e.offset >= x.start && e.offset < x.start + x.size);
    yield jsonLine({
      type: 'decode_error',
      cpu: e.cpu,
      ...(e.pid === undefined ? {} : { pid: e.pid, tid: e.tid }),
      code: e.code,
      message: e.message,
      reason: e.reason,
      ip: jsonHex(e.ip),
      ...(tc ? jsonTime(tscToPerfTime(e.estTsc, tc)) : {}),
      tsc: e.tsc.toString(),
      offset: e.offset,
      aux_buffer: b ? { offset: b.fileOffset, buffer_offset: e.offset - b.start } : null,
    });
  }
  for (const c of r.perCpu) yield jsonLine({ type: 'decode_cpu', ...c });
  yield jsonLine({
    type: 'decode_summary',
    input: info.input,
    timed: tc !== undefined,
    pokes: info.pokes,
    instructions: r.instructions,
    errors: r.errors,
    seconds: Number(info.seconds.toFixed(3)),
  });
}
