import type { Command } from 'commander';
import { flowTiming, loadPtRecording, recordingSwitchIps } from '../../intelpt/flow/recording.js';
import { QueueTasks } from '../../intelpt/flow/queue-tasks.js';
import { decodeFlow, type FlowResult } from '../../intelpt/flow/decode.js';
import { decodeJsonLines } from '../../format/itrace.js';
import { defaultToErrors, resolveItrace } from '../../format/itrace-presets.js';
import { perfItraceSink, type TaskError } from '../../format/itrace-perf.js';
import { otherSampleDeliveries, perfItraceOptions } from '../../format/itrace-recording.js';
import { itraceWalkQuiet } from '../../format/itrace-walk-quiet.js';
import { FormatOptionError } from '../../format/errors.js';
import { codeImageWarnings } from '../../machine/code-warnings.js';
import { decodeRaw, rawDecodeOptions, type RawDecodeOptions } from '../decode-raw.js';
import { UsageError } from '../errors.js';
import { jsonOption } from '../options.js';
import { OutputSink } from '../output.js';
import { fillDefaultInput, INPUT_DEFAULT_HELP } from '../input.js';

/**
 * `perfpoke decode -i DIR`: decode the intel_pt trace of a recording over
 * its code image and text pokes and print what `perf script --itrace=…`
 * prints (perf's default fields or -F, all CPUs in perf's time order), and
 * the `N instruction trace errors` summary. Raw mode (`--raw-pt`) decodes a
 * bare PT stream over flat images, printing what libipt's `ptxed --no-inst` prints.
 */

export { perfErrorLine } from '../../format/itrace.js';

interface DecodeCliOptions extends Omit<RawDecodeOptions, 'rawPt'> {
  input?: string;
  itrace?: string;
  insnTrace?: boolean;
  callTrace?: boolean;
  callRetTrace?: boolean;
  ns?: boolean;
  fields?: string;
  json?: boolean;
  rawPt?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('decode')
    .description(
      'decode an intel_pt recording (perf --kcore directory) over its code image and text pokes, like perf ' +
        'script --itrace',
    )
    .option('-i, --input <path>', `recording: a perf record --kcore directory (or perf.data); ${INPUT_DEFAULT_HELP}`)
    .hook('preAction', fillDefaultInput)
    .option('--itrace <spec>', "perf's --itrace: i[period] b c r e x w p o l[N] L[N] g[N] G[N] s<N> (default e)")
    .option('--insn-trace', 'every instruction with its bytes (perf script --insn-trace: --itrace=i0nse -F +insn)')
    .option('--call-trace', 'calls indented, power events (perf script --call-trace: --itrace=cewp, -F callindent)')
    .option('--call-ret-trace', 'calls and returns indented (perf script --call-ret-trace: --itrace=crewp)')
    .option('--ns', 'times with nanoseconds (perf script --ns)')
    .option('-G, --hide-call-graph', 'accepted as perf script -G, which intel_pt overrides for --itrace=g/G')
    .option(
      '-F, --fields <list>',
      'perf script -F: comm,tid,pid,cpu,time,period,event,ip,sym,symoff,dso,addr,insn,flags,callindent,brstack…',
    )
    .option('--cpu <n>', 'only this CPU (raw mode: the CPU model, none|f/m[/s], as ptxed --cpu)')
    .option('--raw-pt <file>', 'raw mode: a bare Intel PT stream, FILE[:FROM[-TO]] (as ptxed --pt)')
    .option(
      '--image <bin:addr>',
      'raw mode: flat code image loaded at addr (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--format <fmt>', 'raw mode output: ptxed (ptxed --no-inst)', 'ptxed');
  rawDecodeOptions(cmd);
  jsonOption(cmd, 'print a JSON Lines report (decode_error, decode_cpu, decode_summary) instead of lines');
  cmd.action(async (o: DecodeCliOptions) => {
    if (o.rawPt) return decodeRaw({ ...o, rawPt: o.rawPt });
    if (!o.input) throw new UsageError('decode: -i DIR (or --raw-pt FILE) is required');
    let choice: ReturnType<typeof resolveItrace>;
    try {
      choice = resolveItrace(o);
    } catch (e) {
      throw e instanceof FormatOptionError ? new UsageError(e.message) : e;
    }
    const { spec, fields } = choice;
    defaultToErrors(spec);
    const onlyCpu = o.cpu === undefined ? undefined : Number(o.cpu);
    const rec = await loadPtRecording(o.input);
    const tc = rec.timeConv;
    const out = new OutputSink(undefined, { sync: true });
    const errors: TaskError[] = [];
    const json = !!o.json;
    const clock = { time: -1n };
    const tasks = new QueueTasks(rec.taskOptions);
    const po = perfItraceOptions(rec, spec, fields, {
      cpu: onlyCpu,
      ns: choice.ns,
      clock,
      tasks,
      dsoPad: choice.dsoPad,
    });
    if (json) Object.assign(po, { instructions: false, branches: false, errors: false, power: undefined });
    const sink = perfItraceSink(po, out, errors);
    sink.walkQuiet = itraceWalkQuiet(po);
    let others: ReturnType<typeof otherSampleDeliveries> = [];
    try {
      if (!json) others = otherSampleDeliveries(rec, po, tasks, (l) => out.line(l), sink);
    } catch (e) {
      throw e instanceof FormatOptionError ? new UsageError(e.message) : e;
    }
    const cpus = onlyCpu === undefined ? rec.cpus : rec.cpus.filter((c) => c.cpu === onlyCpu);
    const t0 = performance.now();
    const r: FlowResult = decodeFlow({
      cpus,
      pokes: rec.pokes,
      code: rec.machine.image,
      timeConv: tc,
      retCompression: rec.retCompression,
      eventTimes: rec.eventTimes,
      // perf 6.1 (non-strict build) forgets the last IP after code it cannot read (ERR2 = NO_IP)
      errors: { afterUnreadableCode: 'forget-ip' },
      clock,
      tasks: { events: rec.taskEvents, tracker: tasks },
      others,
      kernelStart: po.kernelStart ?? 1n << 63n,
      syncSwitch: recordingSwitchIps(rec),
      quick: spec.quick,
      ...flowTiming(rec),
      sink,
    });
    sink.flush?.();
    const seconds = (performance.now() - t0) / 1000;
    const warnings = codeImageWarnings(rec.machine, { pmuType: rec.pmuType, errorIps: errors.map((e) => e.ip) });
    for (const w of warnings) process.stderr.write(`perfpoke decode: warning: ${w}\n`);
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
    if (!json) process.stderr.write(`${errors.length} instruction trace errors\n`);
  });
}
