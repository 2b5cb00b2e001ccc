export { MemoryTaskStore, type MemoryTaskStoreOptions } from './memory-store.js';
