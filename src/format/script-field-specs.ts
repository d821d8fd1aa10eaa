/**
 * perf 6.1's `-F` option in all its forms (builtin-script.c
 * parse_output_fields): a list replacing every type's fields, `+f`/`-f`
 * edits of the current fields, and per-type lists (`sw:comm,ip`,
 * `trace:+cpu`), several `-F` applied in order. Also which fields each type
 * prints by default (output[]). The result says, per output type, which
 * fields are printed and which the user named (perf errors when a named field
 * cannot be given; a default one is dropped silently).
 */
import { FormatOptionError } from './errors.js';

/** Every field name perf 6.1 accepts (all_output_options, plus 'flags'). */
export const PERF_FIELDS = [
  'comm',
  'tid',
  'pid',
  'time',
  'cpu',
  'event',
  'trace',
  'ip',
  'sym',
  'dso',
  'addr',
  'symoff',
  'srcline',
  'period',
  'iregs',
  'uregs',
  'brstack',
  'brstacksym',
  'flags',
  'data_src',
  'weight',
  'bpf-output',
  'brstackinsn',
  'brstackinsnlen',
  'brstackoff',
  'callindent',
  'insn',
  'insnlen',
  'synth',
  'phys_addr',
  'metric',
  'misc',
  'srccode',
  'ipc',
  'tod',
  'data_page_size',
  'code_page_size',
  'ins_lat',
] as const;
export type PerfField = (typeof PERF_FIELDS)[number];

/** Output types (perf's output_type()): 0 hw, 1 sw, 2 trace, 3 hw_cache, 4 raw, 5 breakpoint, 6 synth/other. */
const TYPE_NAMES: Record<string, number> = { hw: 0, sw: 1, trace: 2, raw: 4, break: 5, synth: 6 };
const EVENT_TYPE = ['hardware', 'software', 'tracepoint', 'hw-cache', 'raw', 'breakpoint', 'synth'];
export const OUTPUT_TYPES = 7;

const SAMPLE_DEFAULT: PerfField[] = ['comm', 'tid', 'cpu', 'time', 'event', 'ip', 'sym', 'symoff', 'dso', 'period'];
/** builtin-script.c output[].fields. */
function defaults(type: number): PerfField[] {
  if (type === 2) return ['comm', 'tid', 'cpu', 'time', 'event', 'trace'];
  if (type === 4) {
    return [
      ...SAMPLE_DEFAULT,
      'addr',
      'data_src',
      'weight',
      'phys_addr',
      'data_page_size',
      'code_page_size',
      'ins_lat',
    ];
  }
  if (type === 6) return ['comm', 'tid', 'cpu', 'time', 'event', 'ip', 'sym', 'dso', 'symoff', 'synth'];
  return SAMPLE_DEFAULT;
}

/** output[].invalid_fields. */
function invalid(type: number, f: PerfField): boolean {
  if (type === 0) return f === 'trace' || f === 'bpf-output';
  if (type === 1) return f === 'trace';
  return false;
}

export interface TypeFields {
  has: Set<PerfField>;
  /** Named by the user (+f or a list): an event that cannot give it is an error. */
  userSet: Set<PerfField>;
}

/** The fields of every output type after the -F options (none: perf's defaults). */
export function resolveFieldSpecs(specs: readonly string[]): TypeFields[] {
  const out: TypeFields[] = [];
  for (let t = 0; t < OUTPUT_TYPES; t++) out.push({ has: new Set(defaults(t)), userSet: new Set() });
  for (const spec of specs) applySpec(out, spec);
  return out;
}

function applySpec(out: TypeFields[], spec: string): void {
  let type = -1;
  let list = spec;
  const colon = spec.indexOf(':');
  const editsOnly = (s: string): boolean => s.includes('+') || s.includes('-');
  if (colon >= 0) {
    const t = TYPE_NAMES[spec.slice(0, colon)];
    if (t === undefined) throw new FormatOptionError('Invalid event type in field string.');
    type = t;
    list = spec.slice(colon + 1);
    if (!editsOnly(list)) out[type] = { has: new Set(), userSet: new Set() };
  } else {
    if (spec === '') throw new FormatOptionError("Cannot set fields to 'none' for all event types.");
    if (!editsOnly(spec)) for (let t = 0; t < OUTPUT_TYPES; t++) out[t] = { has: new Set(), userSet: new Set() };
  }
  let change: 'default' | 'set' | 'add' | 'remove' = 'default';
  for (let tok of list.split(',').filter(Boolean)) {
    if (tok.startsWith('+') || tok.startsWith('-')) {
      if (change === 'set') throw new FormatOptionError('Cannot mix +-field with overridden fields');
      change = tok.startsWith('+') ? 'add' : 'remove';
      tok = tok.slice(1);
    } else {
      if (change !== 'set' && change !== 'default')
        throw new FormatOptionError('Cannot mix +-field with overridden fields');
      change = 'set';
    }
    if (!(PERF_FIELDS as readonly string[]).includes(tok)) throw new FormatOptionError('Invalid field requested.');
    const f = tok as PerfField;
    const types = type === -1 ? [...Array(OUTPUT_TYPES).keys()] : [type];
    for (const t of types) {
      if (invalid(t, f)) {
        // perf warns and ignores for "all types", refuses for a named type
        if (type === -1) continue;
        throw new FormatOptionError(`'${f}' not valid for ${EVENT_TYPE[t]} events.`);
      }
      const tf = out[t]!;
      if (change === 'remove') {
        tf.has.delete(f);
        tf.userSet.delete(f);
      } else {
        tf.has.add(f);
        tf.userSet.add(f);
      }
    }
  }
}
