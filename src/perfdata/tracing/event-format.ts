/**
 * One tracepoint format file (/sys/kernel/tracing/events/SYS/NAME/format, as
 * the tracing data carries it): the event's name and id, its fields (offset,
 * size, signedness, fixed arrays, `__data_loc` / `__rel_loc` dynamic data)
 * and its `print fmt:` (the format string and the argument expressions,
 * print-args.ts). libtraceevent's event_read_format / event_read_print read
 * the same text.
 */
import { type PrintFmt, parsePrintFmt } from './print-args.js';

export interface FieldFormat {
  name: string;
  /** The C type as written, without the array suffix ("char", "unsigned long", "__data_loc char[]"). */
  type: string;
  offset: number;
  size: number;
  signed: boolean;
  /** `name[N]`: a fixed array of N elements. */
  array?: number;
  /** Size of one element (size / N for arrays, the type's size for __data_loc arrays). */
  elementSize: number;
  /** `__data_loc`: u32 (len << 16 | offset); `__rel_loc`: offset counted from the field's end. */
  dynamic?: 'data_loc' | 'rel_loc';
  /** A common_* field (before the first blank line of the format). */
  common: boolean;
}

export interface EventFormat {
  system: string;
  name: string;
  id: number;
  fields: FieldFormat[];
  /** The parsed print fmt, or why it could not be parsed (perf prints "[FAILED TO PARSE]" then). */
  print: PrintFmt | { error: string };
}

const FIELD_RE = /^\s*field:(.*?);\s*offset:(\d+);\s*size:(\d+);(?:\s*signed:(\d+);)?/;

/** Sizes of the element types __data_loc arrays use (libtraceevent: type_size). */
const ELEMENT_SIZE: Record<string, number> = {
  char: 1,
  'unsigned char': 1,
  u8: 1,
  s8: 1,
  short: 2,
  'unsigned short': 2,
  u16: 2,
  s16: 2,
  int: 4,
  'unsigned int': 4,
  u32: 4,
  s32: 4,
  long: 8,
  'unsigned long': 8,
  'long long': 8,
  'unsigned long long': 8,
  u64: 8,
  s64: 8,
};

function parseField(decl: string, offset: number, size: number, signed: boolean, common: boolean): FieldFormat {
  let d = decl.trim();
  let dynamic: FieldFormat['dynamic'];
  if (d.startsWith('__data_loc ')) dynamic = 'data_loc';
  else if (d.startsWith('__rel_loc ')) dynamic = 'rel_loc';
  let array: number | undefined;
  const arr = /\[(\w*)\]\s*$/.exec(d);
  if (arr && !dynamic) {
    array = Number(arr[1]);
    d = d.slice(0, arr.index).trimEnd();
  }
  const m = /^(.*?)([A-Za-z_]\w*)$/.exec(d);
  const name = m?.[2] ?? d;
  const type = (m?.[1] ?? '').trim();
  let elementSize = size;
  if (array !== undefined && array > 0) elementSize = size / array;
  if (dynamic)
    elementSize =
      ELEMENT_SIZE[
        type
          .replace(/^__(data|rel)_loc\s+/, '')
          .replace(/\[\]$/, '')
          .trim()
      ] ?? 1;
  return { name, type, offset, size, signed, array, elementSize, dynamic, common };
}

/** Parse a format file; undefined when it names no event (no "name:" or "ID:"). */
export function parseEventFormat(text: string, system: string): EventFormat | undefined {
  const name = /^name:\s*(\S+)/m.exec(text)?.[1];
  const id = /^ID:\s*(\d+)/m.exec(text)?.[1];
  if (name === undefined || id === undefined) return undefined;
  const fields: FieldFormat[] = [];
  const start = text.indexOf('format:');
  const printAt = text.indexOf('print fmt:');
  const body = text.slice(start < 0 ? 0 : start + 7, printAt < 0 ? undefined : printAt);
  let common = true;
  let seenField = false;
  for (const line of body.split('\n')) {
    const m = FIELD_RE.exec(line);
    if (!m) {
      // the blank line after the common fields starts the event's own
      if (seenField && line.trim() === '') common = false;
      continue;
    }
    seenField = true;
    fields.push(parseField(m[1]!, Number(m[2]), Number(m[3]), m[4] === '1', common));
  }
  let print: EventFormat['print'];
  if (printAt < 0) print = { error: 'no print fmt' };
  else {
    try {
      print = parsePrintFmt(text.slice(printAt + 10), (n) => fields.some((f) => f.name === n));
    } catch (e) {
      print = { error: (e as Error).message };
    }
  }
  return { system, name, id: Number(id), fields, print };
}
