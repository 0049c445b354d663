export * from './types.js';
export * from './memory.js';
