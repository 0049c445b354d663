export * from './signature.js';
export * from './errors.js';
export * from './events.js';
export * from './verifier.js';
