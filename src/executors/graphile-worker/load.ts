import { TaskrailError } from '../../task/errors.js';

export type GraphileWorkerModule = typeof import('graphile-worker');

/** Loads graphile-worker, an optional peer dependency needed only to run tasks on Postgres. */
export async function loadGraphileWorker(): Promise<GraphileWorkerModule> {
  const specifier = 'graphile-worker';
  try {
    return (await import(specifier)) as GraphileWorkerModule;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new TaskrailError(
        'CONFIG',
        "running tasks on a postgres:// store needs the 'graphile-worker' package: " +
          'run `npm install graphile-worker pg`',
        { cause: error },
      );
    }
    throw error;
  }
}
