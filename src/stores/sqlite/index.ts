export { SqliteTaskStore, type SqliteTaskStoreOptions } from './sqlite-store.js';
export { SCHEMA_VERSION } from './schema.js';
