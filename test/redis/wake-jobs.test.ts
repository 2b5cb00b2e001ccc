import { describe } from 'node:test';
import { Queue } from 'bullmq';
import { createBullmqExecutor } from '../../src/executors/bullmq/index.js';
import { openRedisStore } from '../../src/stores/redis/index.js';
import { registerWakeJobScenarios, type WakeJobEngine } from '../helpers/wake-job-scenarios.js';
import {
  deletePrefix,
  REDIS_URL,
  skipWithoutRedis,
  uniquePrefix,
  urlWithPrefix,
} from './redis-env.js';

if (!skipWithoutRedis('wake-up jobs on redis + bullmq')) {
  describe('wake-up jobs on Redis + BullMQ: owned by their task, placed fairly', () => {
    const prefix = uniquePrefix();
    const url = urlWithPrefix(prefix);
    const queue = new Queue('tasks', {
      connection: { url: REDIS_URL },
      prefix: `${prefix}:{bull}`,
    });
    const engine: WakeJobEngine = {
      async open(mode, slots) {
        const store = await openRedisStore(url);
        const executor = createBullmqExecutor({
          connectionUrl: url,
          mode,
          concurrency: slots,
          store,
        });
        return { store, executor };
      },
      async jobs() {
        const counts = await queue.getJobCounts('delayed', 'waiting', 'prioritized');
        return Object.values(counts).reduce((sum, n) => sum + n, 0);
      },
      async close() {
        await queue.close();
        await deletePrefix(prefix);
      },
    };
    registerWakeJobScenarios(() => engine);
  });
}
