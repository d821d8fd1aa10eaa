/**
 * perf script's itrace presets (builtin-script.c): `--insn-trace`
 * (--itrace=i0ns, -F +insn, nanoseconds), `--call-trace` (--itrace=cewp,
 * -F -ip,-addr,-event,-period,+callindent, nanoseconds, dso names padded to
 * 50) and `--call-ret-trace` (the same with crewp and +flags), resolved with
 * the user's own --itrace / -F into what decode prints.
 */
import { FormatOptionError } from './errors.js';
import { parseItrace, type ItraceSpec } from './itrace-options.js';
import { parseItraceFields, type ItraceFields } from './itrace-perf.js';

export interface ItracePresetInput {
  itrace?: string | undefined;
  fields?: string | undefined;
  insnTrace?: boolean | undefined;
  callTrace?: boolean | undefined;
  callRetTrace?: boolean | undefined;
  ns?: boolean | undefined;
}

export interface ItraceChoice {
  spec: ItraceSpec;
  fields: ItraceFields;
  ns: boolean;
  /** symbol_conf.pad_output_len_dso (0: none). */
  dsoPad: number;
}

const CALL_FIELDS = ['-ip', '-addr', '-event', '-period', '+callindent'];

/** The itrace spec and fields for decode's options; a bad or unsupported one throws FormatOptionError. */
export function resolveItrace(o: ItracePresetInput): ItraceChoice {
  const presets = [o.insnTrace && '--insn-trace', o.callTrace && '--call-trace', o.callRetTrace && '--call-ret-trace'];
  const given = presets.filter((p): p is string => typeof p === 'string');
  if (given.length > 1) throw new FormatOptionError(`${given.join(' and ')}: give one of them`);
  const call = o.callTrace || o.callRetTrace;
  // perf applies the preset's synth options when it reads the option: a later --itrace replaces them
  // (order-dependent in perf), so decode takes only one of the two
  if (call && o.itrace !== undefined)
    throw new FormatOptionError(`${given[0]} sets --itrace itself (${o.callTrace ? 'cewp' : 'crewp'}): drop --itrace`);
  let itrace = o.itrace ?? 'e';
  let preset: string[] = [];
  if (o.insnTrace) {
    itrace = `i0nse${o.itrace ?? ''}`;
    preset = ['+insn', '-event', '-period'];
  } else if (o.callTrace) {
    itrace = 'cewp';
    preset = CALL_FIELDS;
  } else if (o.callRetTrace) {
    itrace = 'crewp';
    preset = [...CALL_FIELDS, '+flags'];
  }
  const spec = parseItrace(itrace);
  // intel_pt_skip_cbr_event retries a skipped cbr sample at every later decoder state: not followed here
  if (spec.power && spec.skip) throw new FormatOptionError(`--itrace=${itrace}: 's' with 'p' is not supported`);
  const f = preset.length ? [...preset, ...(o.fields ? [o.fields] : [])].join(',') : o.fields;
  return {
    spec,
    fields: parseItraceFields(f),
    ns: !!(o.ns || o.insnTrace || call),
    // perf 6.1 pads for --call-trace only (measured: --call-ret-trace prints dso names unpadded)
    dsoPad: o.callTrace ? 50 : 0,
  };
}

/**
 * perf script --itrace with no letter that prints samples of its own prints
 * the errors (`l`, `L`, `g`, `G` and `q` only decorate other samples; `x`,
 * `w`, `o` print nothing here).
 */
export function defaultToErrors(spec: ItraceSpec): void {
  const decorations = spec.lastBranch || spec.addLastBranch || spec.callchain || spec.addCallchain || spec.quick;
  if (!(spec.instructions || spec.branches || spec.power || spec.quiet.length || decorations)) spec.errors = true;
}
