import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { loadPtRecording } from '../../intelpt/flow/recording.js';
import { decodeFlow, type FlowCodeReader, type FlowResult } from '../../intelpt/flow/decode.js';
import type { FlowError } from '../../intelpt/flow/cpu-flow.js';
import { decodeJsonLines, itraceSink, ptxedSink, ITRACE_FIELDS, type ItraceField } from '../../format/itrace.js';
import { codeImageWarnings } from '../../machine/code-warnings.js';
import { UsageError } from '../errors.js';
import { jsonOption } from '../options.js';
import { OutputSink } from '../output.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke decode -i DIR`: decode the intel_pt trace of a recording over
 * its code image and text pokes; print instructions (`--itrace=i`), branches
 * (`b`) and trace errors (`e`) in perf script's formats, and the
 * `N instruction trace errors` summary. Raw mode (`--raw-pt`) decodes a bare
 * PT stream over flat images, printing what libipt's `ptxed --no-inst` prints.
 */

export { perfErrorLine } from '../../format/itrace.js';

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
  const cmd = program
    .command('decode')
    .description(
      'decode an intel_pt recording (perf --kcore directory) over its code image and text pokes, like perf script --itrace',
    )
    .option('-i, --input <path>', `recording: a perf record --kcore directory (or perf.data); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option('--itrace <spec>', 'what to print: i (instructions), b (branches), e (errors); e.g. "e", "ie"', 'e')
    .option('-F, --fields <list>', 'fields for i/b lines: cpu,time,ip,addr (perf script -F)')
    .option('--cpu <n>', 'only this CPU')
    .option('--raw-pt <file>', 'raw mode: a bare Intel PT stream (as ptxed --pt)')
    .option(
      '--image <bin:addr>',
      'raw mode: flat code image loaded at addr (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--format <fmt>', 'raw mode output: ptxed (ptxed --no-inst)', 'ptxed');
  jsonOption(cmd, 'print a JSON Lines report (decode_error, decode_cpu, decode_summary) instead of lines');
  cmd.action(async (o: DecodeCliOptions) => {
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
      if (!(ITRACE_FIELDS as readonly string[]).includes(f))
        throw new UsageError(`-F: unsupported field "${f}" (cpu, time, ip, addr)`);
    const onlyCpu = o.cpu === undefined ? undefined : Number(o.cpu);
    const rec = await loadPtRecording(o.input);
    const tc = rec.timeConv;
    const out = new OutputSink(undefined, { sync: true });
    const errors: FlowError[] = [];
    const json = !!o.json;
    const sink = itraceSink(
      {
        instructions: wantI && !json,
        branches: wantB && !json,
        errors: wantE && !json,
        fields: fields as ItraceField[],
        cpu: onlyCpu,
        timeConv: tc,
      },
      (l) => out.line(l),
      errors,
    );
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
    const seconds = (performance.now() - t0) / 1000;
    for (const w of codeImageWarnings(rec.machine, { pmuType: rec.pmuType, errorIps: errors.map((e) => e.ip) }))
      process.stderr.write(`perfpoke decode: warning: ${w}\n`);
    if (json) {
      const buffers = (cpu: number) => rec.cpus.find((c) => c.cpu === cpu)?.buffers ?? [];
      for (const l of decodeJsonLines(r, errors, {
        input: o.input,
        pokes: rec.pokes.length,
        seconds,
        timeConv: tc,
        buffers,
      }))
        out.write(l);
    }
    await out.close();
    if (!json) process.stderr.write(`${r.errors} instruction trace errors\n`);
  });
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

async function rawMode(o: DecodeCliOptions): Promise<void> {
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
  const out = new OutputSink(undefined, { sync: true });
  const sink = ptxedSink((l) => out.line(l));
  const r = decodeFlow({ cpus: [{ cpu: 0, trace }], pokes: [], code: new FlatImage(segs), sink, retCompression: true });
  await out.close();
  process.stderr.write(`${r.errors} instruction trace errors\n`);
}
