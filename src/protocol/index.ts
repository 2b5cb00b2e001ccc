export * from './constants.js';
export * from './errors.js';
export * from './encode.js';
export * from './envelope.js';
export * from './jsonrpc.js';
export * from './structured-text.js';
