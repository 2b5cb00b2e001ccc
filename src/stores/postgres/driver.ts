import type pg from 'pg';
import { TaskrailError } from '../../task/errors.js';

export type PgModule = typeof pg;

/**
 * Loads node-postgres, an optional peer dependency: only a postgres store needs it. A variable
 * specifier keeps it out of the load path of everything else.
 */
export async function loadPg(): Promise<PgModule> {
  const specifier = 'pg';
  try {
    const loaded = (await import(specifier)) as { default?: PgModule } & PgModule;
    return loaded.default ?? loaded;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new TaskrailError(
        'CONFIG',
        "a postgres:// store needs the 'pg' package: run `npm install pg`",
        { cause: error },
      );
    }
    throw error;
  }
}
