/** perfpoke library entry. Each layer exports its public API here. */
export * from './io/errors.js';
export * from './io/hex.js';
export * from './abi/record-type.js';
export * from './abi/sample-format.js';
export * from './abi/feature.js';
export * from './abi/event-attr.js';
export * from './perfdata/event-attr-codec.js';
export * from './perfdata/file-header.js';
export * from './record/index.js';
export * from './x86/index.js';
export * from './intelpt/packets/index.js';
export * from './perfdata/index.js';
export * from './machine/index.js';
export * from './intelpt/auxtrace-info.js';
export * from './intelpt/aux-queues.js';
export * from './perfdata/writer-api.js';
export * from './session/index.js';
export * from './intelpt/packet-encoder.js';
export * from './intelpt/flow/index.js';
export * from './intelpt/ptxed/index.js';
export * from './sim/index.js';
export * from './format/index.js';
export {
  gatherReport,
  reportHtml,
  reportOf,
  type ReportData,
  type ReportPoke,
  type ReportSite,
} from './report/index.js';
