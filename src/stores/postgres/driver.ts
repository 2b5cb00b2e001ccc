import type pg from 'pg';
import { importWithPeers } from '../../task/peer-dependency.js';

export type PgModule = typeof pg;

/**
 * Loads node-postgres, an optional peer dependency: only a postgres store needs it. A variable
 * specifier keeps it out of the load path of everything else.
 */
export async function loadPg(): Promise<PgModule> {
  const specifier = 'pg';
  const loaded = await importWithPeers(
    async () => (await import(specifier)) as { default?: PgModule } & PgModule,
    ['pg'],
    'a postgres:// store',
  );
  return loaded.default ?? loaded;
}
