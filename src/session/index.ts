/** Time-ordered delivery of perf.data records, event names, statistics (perf's session layer). */
export * from './ordered-events.js';
export * from './session.js';
export * from './stats.js';
export * from './threads.js';
export * from './event-names.js';
export * from './sample-read.js';
export * from './user-maps.js';
