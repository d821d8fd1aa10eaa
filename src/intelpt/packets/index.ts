export * from './kinds.js';
export * from './raw-decode.js';
export * from './packet.js';
export * from './cursor.js';
export * from './last-ip.js';
