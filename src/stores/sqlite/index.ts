export { SqliteTaskStore } from './sqlite-store.js';
export type { SqliteTaskStoreOptions } from './options.js';
import { SCHEMA_VERSION as CURRENT_SCHEMA } from './schema.js';

/**
 * The schema version this build writes. Declared here rather than re-exported, so that this
 * entry's public types never mention better-sqlite3 (whose types are not a dependency).
 */
export const SCHEMA_VERSION: number = CURRENT_SCHEMA;
