export * from './classify.js';
export * from './block-cache.js';
