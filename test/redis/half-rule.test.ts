import { after, before, describe } from 'node:test';
import { registerHalfRuleScenario } from '../helpers/half-rule-scenario.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('the more-than-half rule on redis + bullmq')) {
  describe('the more-than-half rule across two BullMQ workers (real processes)', () => {
    const prefix = uniquePrefix();
    const deployment = registerHalfRuleScenario(urlWithPrefix(prefix));
    before(() => deployment.start());
    after(async () => {
      await deployment.stop();
      await deletePrefix(prefix);
    });
  });
}
