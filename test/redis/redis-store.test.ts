import { openRedisStore } from '../../src/stores/redis/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('redis TaskStore contract')) {
  taskStoreContract('redis', async ({ clock }) => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    return {
      store: await openRedisStore(url, { clock, leaseClock: 'caller' }),
      reopen: () => openRedisStore(url, { clock, leaseClock: 'caller' }),
      cleanup: async () => {
        await deletePrefix(prefix);
      },
    };
  });
}
