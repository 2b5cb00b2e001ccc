import { openRedisStore } from '../../src/stores/redis/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

/** The Redis scan reads ids and revisions only; BullMQ's job priorities order its work. */
const FAIR_SKIP = {
  skip: {
    'findRunnable takes principals in turn, each one oldest first':
      'the Redis recovery scan is in creation order; BullMQ priorities give the fair order',
  },
};

if (!skipWithoutRedis('redis TaskStore contract')) {
  taskStoreContract(
    'redis',
    async ({ clock }) => {
      const prefix = uniquePrefix();
      const url = urlWithPrefix(prefix);
      return {
        store: await openRedisStore(url, { clock, leaseClock: 'caller' }),
        reopen: () => openRedisStore(url, { clock, leaseClock: 'caller' }),
        cleanup: async () => {
          await deletePrefix(prefix);
        },
      };
    },
    FAIR_SKIP,
  );
}
