import { importWithPeers } from '../../task/peer-dependency.js';

export type GraphileWorkerModule = typeof import('graphile-worker');

/** Loads graphile-worker, an optional peer dependency needed only to run tasks on Postgres. */
export async function loadGraphileWorker(): Promise<GraphileWorkerModule> {
  const specifier = 'graphile-worker';
  return importWithPeers(
    async () => (await import(specifier)) as GraphileWorkerModule,
    ['graphile-worker', 'pg'],
    'running tasks on a postgres:// store',
  );
}
