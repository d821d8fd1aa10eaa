export * from './rng.js';
export * from './codegen.js';
export * from './executor.js';
export * from './perf-file.js';
export * from './simulate.js';
