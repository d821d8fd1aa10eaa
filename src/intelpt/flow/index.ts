export * from './time-conv.js';
export * from './cpu-flow.js';
export * from './trace-source.js';
export * from './decode.js';
export * from './recording.js';
export * from './queue-tasks.js';
