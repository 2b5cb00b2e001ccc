import type { Executor, Logger } from '../runtime/api.js';
import type { TaskStore } from '../store/port.js';
import { importWithPeers } from '../task/peer-dependency.js';
import { storeKindOf } from '../store/url.js';

export interface ServeExecutorOptions {
  /** The store URL serve opened. */
  storeUrl: string;
  /** The store serve opened (names BullMQ jobs after task revisions; see BullmqExecutorOptions). */
  store: TaskStore;
  /** False under `--no-worker`: this replica only records and dispatches tasks. */
  worker: boolean;
  /** Tasks this replica runs at once when it is also a worker. Default 10. */
  concurrency?: number;
  logger?: Logger;
}

/**
 * The executor `taskrail serve` hands its runtime. A redis store runs tasks through BullMQ: as a
 * worker itself by default, or dispatch-only under `--no-worker`, so that any `taskrail worker`
 * picks a task up at once; a postgres store does the same through graphile-worker. Any other
 * store runs tasks in this process. Each job engine is loaded only for its store.
 */
export async function serveExecutor(options: ServeExecutorOptions): Promise<'local' | Executor> {
  const kind = storeKindOf(options.storeUrl);
  if (kind === 'postgres') {
    // A postgres store runs tasks through graphile-worker, the same way.
    const { createGraphileExecutor } = await import('./graphile-worker/graphile-executor.js');
    return createGraphileExecutor({
      connectionUrl: options.storeUrl.trim(),
      mode: options.worker ? 'work' : 'dispatch',
      store: options.store,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  }
  if (kind !== 'redis') return 'local';
  const { createBullmqExecutor } = await importWithPeers(
    async () => import('./bullmq/bullmq-executor.js'),
    ['ioredis', 'bullmq'],
    'a redis:// store',
  );
  return createBullmqExecutor({
    connectionUrl: options.storeUrl.trim(),
    mode: options.worker ? 'work' : 'dispatch',
    store: options.store,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}
