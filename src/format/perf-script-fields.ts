/**
 * The -F fields of `perf script` that perfpoke prints, and perf 6.1's rules
 * for which of them an event can give (builtin-script.c all_output_options,
 * output[] defaults, perf_session__check_output_opt / evsel__check_attr).
 */
import { PerfType } from '../abi/event-attr.js';
import { Feature } from '../abi/feature.js';
import { SampleType } from '../abi/sample-format.js';
import type { Session } from '../session/session.js';
import { FormatOptionError } from './errors.js';
import { type PerfField, PERF_FIELDS, resolveFieldSpecs, type TypeFields } from './script-field-specs.js';

/**
 * The sample columns past the basic ones, printed by script-sample-extra.ts (misc also on side-band lines),
 * script-brstack.ts and the printer (insn, insnlen).
 */
export const EXTRA_FIELDS: readonly PerfField[] = [
  'misc',
  'data_src',
  'weight',
  'ins_lat',
  'iregs',
  'uregs',
  'insnlen',
  'insn',
  'phys_addr',
  'data_page_size',
  'code_page_size',
  'brstack',
  'brstacksym',
  'brstackoff',
];

/** The -F fields we print; perf's names (builtin-script.c all_output_options). */
export const SCRIPT_FIELDS: readonly PerfField[] = [
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
  'trace',
  ...EXTRA_FIELDS,
  'tod', // script-time.ts
  'srcline', // script-srcline.ts
];
export type ScriptField = PerfField;

/** builtin-script.c output[] defaults, minus sym/dso/symoff (which need symbols). */
const DEFAULT_FIELDS: ScriptField[] = ['comm', 'tid', 'cpu', 'time', 'event', 'ip', 'period'];
const DEFAULT_TRACEPOINT_FIELDS: ScriptField[] = ['comm', 'tid', 'cpu', 'time', 'event', 'trace'];

export interface ScriptOptions {
  /** A plain field list (one `-F a,b` for every type); `fieldSpecs` wins when both are given. */
  fields?: ScriptField[];
  /** The -F options as typed, in order: lists, +f/-f edits, `type:` lists (script-field-specs.ts). */
  fieldSpecs?: string[];
  showTaskEvents?: boolean;
  showMmapEvents?: boolean;
  showSwitchEvents?: boolean;
  showTextPokeEvents?: boolean;
  showBpfEvents?: boolean;
  showNamespaceEvents?: boolean;
  showCgroupEvents?: boolean;
  showLostEvents?: boolean;
  showRoundEvents?: boolean;
  json?: boolean;
  /** --ns: times with nanoseconds. */
  ns?: boolean;
  /** --reltime / --deltatime: times since the first / the previous line printed with a time. */
  reltime?: boolean;
  deltatime?: boolean;
  /** -G / --hide-call-graph: the ip on the sample line, no callchain. */
  hideCallGraph?: boolean;
  /** --max-stack: callchain entries printed (perf's default: 127, the kernel's perf_event_max_stack). */
  maxStack?: number;
  /** --cpu, --pid, --tid, --comm, --time as the user typed them (src/format/script-filters.ts). */
  cpu?: string;
  pid?: string;
  tid?: string;
  comm?: string;
  time?: string;
  /** --header / --header-only: the data header first / only (the CLI prints it). */
  header?: boolean;
  headerOnly?: boolean;
}

/** perf's output_type(): one field set per attr type class. */
export function outputType(attrType: number): number {
  return Math.min(attrType, 6);
}

/** "comm,tid,ip" → the field list; an unknown field, or one we do not print yet, is a FormatOptionError. */
export function parseFields(spec: string): ScriptField[] {
  const out: ScriptField[] = [];
  for (const f of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (f.includes(':') || /^[+-]/.test(f))
      throw new FormatOptionError(`-F ${f}: pass per-type lists and edits as fieldSpecs`);
    if (!(PERF_FIELDS as readonly string[]).includes(f)) throw new FormatOptionError('Invalid field requested.');
    if (!SCRIPT_FIELDS.includes(f as PerfField)) throw unsupported(f, true);
    out.push(f as ScriptField);
  }
  return out;
}

function unsupported(f: string, user: boolean): FormatOptionError {
  const how = user ? '' : " (in perf's default fields for this event: name the fields with -F)";
  return new FormatOptionError(`-F: field '${f}' is not supported yet${how}; supported: ${SCRIPT_FIELDS.join(',')}`);
}

/**
 * The fields per output type: from `fieldSpecs` (perf's -F forms) or a plain
 * `fields` list, else perf's defaults. In JSON mode a default field we cannot
 * print yet is left out; in text mode it is an error (never a different text).
 */
export function fieldsPerType(opts: ScriptOptions): TypeFields[] {
  if (opts.fieldSpecs && opts.fieldSpecs.length > 0) return resolveFieldSpecs(opts.fieldSpecs);
  if (opts.fields) return resolveFieldSpecs([opts.fields.join(',') || ',']);
  return resolveFieldSpecs([]);
}

/**
 * After checkAttr: a field left that we cannot print is kept as the error to
 * raise at the first sample of that type (JSON: a perf default is dropped).
 */
export function checkPrintable(fs: FieldSet, userSet: ReadonlySet<PerfField>, json: boolean): void {
  for (const f of fs.has) {
    if (SCRIPT_FIELDS.includes(f)) continue;
    if (json && !userSet.has(f)) fs.has.delete(f);
    else fs.unprintable ??= unsupported(f, userSet.has(f));
  }
}

export interface FieldSet {
  has: Set<ScriptField>;
  /** perf: comm is printed unpadded when ip and a callchain are printed. */
  callchain: boolean;
  /** A field we cannot print yet: raised when a sample of this type is printed. */
  unprintable?: FormatOptionError;
}

/**
 * perf_session__check_output_opt / process_attr → evsel__check_attr, for the
 * first attr of each type class: a field the user asked for that the event
 * cannot give is an error with perf's wording; a default field it cannot give
 * is dropped. Dummy events and attrs without sample_type are not checked.
 */
export function checkAttr(s: Session, i: number, userSet: ReadonlySet<PerfField>, fs: FieldSet): void {
  const a = s.file.attrs[i]!.attr;
  const isDummy = a.type === PerfType.SOFTWARE && a.config === 9n;
  if (isDummy || s.file.featureSection(Feature.STAT) !== undefined) return;
  if (s.file.pipe && a.sampleType === 0n) return;
  const allowUserSet = s.file.featureSection(Feature.AUXTRACE) !== undefined;
  const has = fs.has;
  const st = a.sampleType;
  const check = (fields: ScriptField[], bit: bigint, msg: string, fieldName: string, allow = false): void => {
    if (!fields.some((f) => has.has(f)) || (st & bit) !== 0n) return;
    if (fields.some((f) => userSet.has(f))) {
      if (allow) return;
      throw new FormatOptionError(
        `Samples for '${s.eventNameAt(i)}' event do not have ${msg} attribute set. Cannot print '${fieldName}' field.`,
      );
    }
    for (const f of fields) has.delete(f);
  };
  if (has.has('symoff') && !has.has('sym'))
    throw new FormatOptionError('Display of offsets requested but symbol is notselected.'); // sic, perf 6.1
  if ((has.has('sym') || has.has('dso')) && (st & (SampleType.IP | SampleType.ADDR)) === 0n) {
    throw new FormatOptionError(
      has.has('sym')
        ? 'Display of symbols requested but neither sample IP nor sample address available.'
        : 'Display of DSO requested but no address to convert.',
    );
  }
  check(['ip'], SampleType.IP, 'IP', 'ip');
  check(['addr'], SampleType.ADDR, 'ADDR', 'addr', allowUserSet);
  check(['data_src'], SampleType.DATA_SRC, 'DATA_SRC', 'data_src', allowUserSet);
  check(['weight'], SampleType.WEIGHT | SampleType.WEIGHT_STRUCT, 'WEIGHT', 'weight', allowUserSet);
  check(['pid', 'tid'], SampleType.TID, 'TID', '');
  check(['time'], SampleType.TIME, 'TIME', 'time');
  check(['cpu'], SampleType.CPU, 'CPU', 'cpu', allowUserSet);
  check(['iregs'], SampleType.REGS_INTR, 'IREGS', 'iregs', allowUserSet);
  check(['uregs'], SampleType.REGS_USER, 'UREGS', 'uregs');
  check(['phys_addr'], SampleType.PHYS_ADDR, 'PHYS_ADDR', 'phys_addr', allowUserSet);
  check(['data_page_size'], SampleType.DATA_PAGE_SIZE, 'DATA_PAGE_SIZE', 'data_page_size');
  check(['code_page_size'], SampleType.CODE_PAGE_SIZE, 'CODE_PAGE_SIZE', 'code_page_size');
  check(['ins_lat'], SampleType.WEIGHT_STRUCT, 'WEIGHT_STRUCT', 'ins_lat');
}

/**
 * perf_session__check_output_opt: with no -F and no -G, tracepoints print ip,
 * sym+off and dso once a tracepoint event records callchains. True if it applied.
 */
export function tracepointChainDefaults(fs: FieldSet, opts: ScriptOptions, attrType: number): boolean {
  if (attrType !== PerfType.TRACEPOINT || opts.hideCallGraph || opts.fields || opts.fieldSpecs?.length) return false;
  for (const f of ['ip', 'sym', 'symoff', 'dso'] as const) fs.has.add(f);
  return true;
}

export function defaultFieldsFor(attrType: number): ScriptField[] {
  return attrType === PerfType.TRACEPOINT ? DEFAULT_TRACEPOINT_FIELDS : DEFAULT_FIELDS;
}
