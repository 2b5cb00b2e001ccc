import { describeResourcesAfterKill } from '../helpers/resource-processes.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('task resources after kill -9 (Redis)')) {
  const prefix = uniquePrefix();
  describeResourcesAfterKill('Redis', () => ({
    url: urlWithPrefix(prefix),
    dispose: async () => void (await deletePrefix(prefix)),
  }));
}
