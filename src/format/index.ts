/** perf's text formats and the JSON Lines convention, for library users: perf's text for one record or a file. */
export * from './errors.js';
export * from './perf-event-text.js';
export * from './text-sink.js';
export * from './json-lines.js';
export { SCRIPT_FIELDS, parseFields, type ScriptField, type ScriptOptions } from './perf-script-fields.js';
export { ScriptPrinter, formatScript, resolveCallchain, type FormatScriptOptions } from './perf-script.js';
export { DumpContext, dumpFile, dumpToString, recordJson, recordText, type DumpOptions } from './perf-dump.js';
export { hexDump } from './perf-dump-sample.js';
export { statsLines, statsJsonLines } from './perf-stats.js';
export { ctimeString, headerLines, headerJsonLines } from './perf-header.js';
export { printFeature, attrFields, cpuListString, type PrintContext } from './header-features.js';
export { ptBufferLines, ptDumpFileLines, type PtDumpFormat } from './pt-dump.js';
export * from './pt-packets-perf.js';
export * from './pt-packets-ptdump.js';
export {
  decodeJsonLines,
  itraceSink,
  perfErrorLine,
  ITRACE_FIELDS,
  type ItraceField,
  type ItraceOptions,
} from './itrace.js';
export {
  perfItraceSink,
  parseItraceFields,
  ITRACE_LINE_FIELDS,
  type ItraceLineField,
  type PerfItraceOptions,
} from './itrace-perf.js';
export { parseItrace, type ItraceSpec, type ItracePeriod } from './itrace-options.js';
export { perfItraceOptions } from './itrace-recording.js';
export { ptxedEventText, ptxedTextSink, type PtxedTextOptions } from './ptxed.js';
export { imageJsonLines, imageListing, imageTextLines, type ImageListing } from './image-text.js';
export { recordSummaryLines } from './record-summary.js';
