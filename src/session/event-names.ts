/**
 * Event names as perf prints them (tools/perf/util/evsel.c evsel__name). A
 * perf.data file normally carries the names in its HEADER_EVENT_DESC feature
 * (or, in pipe mode, EVENT_UPDATE NAME records); this is the fallback perf
 * itself uses when an attr comes without one: the generic name of the
 * hardware/software event plus the ":ukhHGp" modifiers.
 */
import { attrFlag, attrPreciseIp, PerfType, type EventAttr } from '../abi/event-attr.js';

const HW_NAMES = [
  'cycles',
  'instructions',
  'cache-references',
  'cache-misses',
  'branches',
  'branch-misses',
  'bus-cycles',
  'stalled-cycles-frontend',
  'stalled-cycles-backend',
  'ref-cycles',
];

const SW_NAMES = [
  'cpu-clock',
  'task-clock',
  'page-faults',
  'context-switches',
  'cpu-migrations',
  'minor-faults',
  'major-faults',
  'alignment-faults',
  'emulation-faults',
  'dummy',
  'bpf-output',
  'cgroup-switches',
];

/** evsel__add_modifiers: ":u", ":k", ":ppp", ":H"… in perf's order. */
export function eventModifiers(attr: EventAttr): string {
  let mods = '';
  let excludeGuestDefault = false;
  const ek = attrFlag(attr, 'exclude_kernel');
  const eu = attrFlag(attr, 'exclude_user');
  const eh = attrFlag(attr, 'exclude_hv');
  if (ek || eu || eh) {
    if (!ek) mods += 'k';
    if (!eu) mods += 'u';
    if (!eh) mods += 'h';
    excludeGuestDefault = true;
  }
  const precise = attrPreciseIp(attr);
  if (precise) {
    mods += 'ppp'.slice(0, precise);
    excludeGuestDefault = true;
  }
  const eHost = attrFlag(attr, 'exclude_host');
  const eGuest = attrFlag(attr, 'exclude_guest');
  if (eHost || eGuest === excludeGuestDefault) {
    if (!eHost) mods += 'H';
    if (!eGuest) mods += 'G';
  }
  return mods ? `:${mods}` : '';
}

/** perf's name for an attr that has no recorded name. */
export function defaultEventName(attr: EventAttr): string {
  const c = Number(attr.config & 0xffffffffn);
  switch (attr.type) {
    case PerfType.HARDWARE:
      return (attr.config < BigInt(HW_NAMES.length) ? HW_NAMES[c]! : 'unknown-hardware') + eventModifiers(attr);
    case PerfType.SOFTWARE:
      return (attr.config < BigInt(SW_NAMES.length) ? SW_NAMES[c]! : 'unknown-software') + eventModifiers(attr);
    case PerfType.RAW:
      return `r${attr.config.toString(16)}${eventModifiers(attr)}`;
    case PerfType.TRACEPOINT:
      return 'unknown tracepoint';
    case PerfType.HW_CACHE:
      return `hw-cache-${attr.config.toString(16)}${eventModifiers(attr)}`;
    case PerfType.BREAKPOINT:
      return `mem:0x${attr.config.toString(16)}${eventModifiers(attr)}`;
    default:
      return `unknown attr type: ${attr.type}`;
  }
}
