/**
 * The -F fields of perf script's itrace sample lines (builtin-script.c's
 * output[] defaults for hardware and synthesized power events, and
 * parse_output_fields' lists and +/- edits), for perfItraceSink.
 */
import { FormatOptionError } from './errors.js';

/** The -F fields an itrace sample line can show (perf script's names). */
export const ITRACE_LINE_FIELDS = [
  'comm',
  'tid',
  'pid',
  'cpu',
  'time',
  'period',
  'event',
  'ip',
  'sym',
  'symoff',
  'dso',
  'addr',
  'insn',
  'insnlen',
  'flags',
  'callindent',
  'brstack',
  'brstacksym',
  'synth',
] as const;
export type ItraceLineField = (typeof ITRACE_LINE_FIELDS)[number];

/** output[PERF_TYPE_HARDWARE] of builtin-script.c: what perf prints with no -F. */
const DEFAULT: ItraceLineField[] = ['comm', 'tid', 'cpu', 'time', 'event', 'ip', 'sym', 'symoff', 'dso', 'period'];

/** output[PERF_TYPE_SYNTH]: the power events' fields with no -F (no period; the synth payload). */
const SYNTH_DEFAULT: ItraceLineField[] = [...DEFAULT.filter((f) => f !== 'period'), 'synth'];

export interface ItraceFields {
  fields: Set<ItraceLineField>;
  /** Fields taken off by `-field` edits (perf's user_unset_fields): never turned on for callchains. */
  unset?: Set<ItraceLineField>;
  /** The fields of the synthesized power events (perf's PERF_TYPE_SYNTH output type). */
  synthFields: Set<ItraceLineField>;
  userSet: boolean;
}

/**
 * The field set for `-F spec` (a list, or +field/-field edits of the default); `userSet` as perf's user_set.
 * A list without a type applies to every output type, edits edit each type's default.
 */
export function parseItraceFields(spec: string | undefined): ItraceFields {
  if (spec === undefined) return { fields: new Set(DEFAULT), synthFields: new Set(SYNTH_DEFAULT), userSet: false };
  const items = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const edit = items.length > 0 && (items[0]!.startsWith('+') || items[0]!.startsWith('-'));
  const fields = new Set<ItraceLineField>(edit ? DEFAULT : []);
  const synthFields = new Set<ItraceLineField>(edit ? SYNTH_DEFAULT : []);
  const unset = new Set<ItraceLineField>();
  for (const it of items) {
    const sign = it[0] === '+' || it[0] === '-' ? it[0] : '';
    if (edit !== (sign !== '')) throw new FormatOptionError(`-F ${spec}: mix of field list and +/- edits`);
    const name = sign ? it.slice(1) : it;
    if (name.includes(':'))
      throw new FormatOptionError(`-F ${it}: per-type field lists ("type:fields") are not supported`);
    if (!(ITRACE_LINE_FIELDS as readonly string[]).includes(name))
      throw new FormatOptionError(
        `-F: field '${name}' is not supported by decode (supported: ${ITRACE_LINE_FIELDS.join(',')})`,
      );
    if (sign === '-') unset.add(name as ItraceLineField);
    for (const set of [fields, synthFields]) {
      if (sign === '-') set.delete(name as ItraceLineField);
      else set.add(name as ItraceLineField);
    }
  }
  // perf's parse_output_fields marks the type user_set for edits too (so `-F +insn` drops a branch's `=> addr`),
  // but not for `-F +flags` alone (measured with perf 6.1: the `=> addr` stays)
  return { fields, synthFields, unset, userSet: !(items.length === 1 && items[0] === '+flags') };
}
