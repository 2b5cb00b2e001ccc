import { after, before, describe } from 'node:test';
import { registerFairBacklogScenario } from '../helpers/fair-share-scenario.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('fair share on redis + bullmq')) {
  for (const workers of [1, 2]) {
    describe(`fair share on Redis + BullMQ, ${workers} worker(s) (real processes)`, () => {
      const prefix = uniquePrefix();
      const deployment = registerFairBacklogScenario(urlWithPrefix(prefix), workers);
      before(() => deployment.start());
      after(async () => {
        await deployment.stop();
        await deletePrefix(prefix);
      });
    });
  }
}
