import { openRedisStore } from '../../src/stores/redis/index.js';
import { describeTaskResources } from '../server/task-resources-frame.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('task resources on Redis')) {
  describeTaskResources('Redis', async () => {
    const prefix = uniquePrefix();
    const store = await openRedisStore(urlWithPrefix(prefix));
    return {
      store,
      async dispose() {
        await store.close();
        await deletePrefix(prefix);
      },
    };
  });
}
