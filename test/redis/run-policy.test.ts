import { after, before, describe } from 'node:test';
import { policyDeployment } from '../helpers/policy-deployment.js';
import { registerPermitScenarios } from '../helpers/permit-scenarios.js';
import { registerPolicyScenarios } from '../helpers/run-policy-scenarios.js';
import { deletePrefix, skipWithoutRedis, uniquePrefix, urlWithPrefix } from './redis-env.js';

if (!skipWithoutRedis('run policy on redis + bullmq')) {
  describe('run policy across processes on Redis + BullMQ (kill -9)', () => {
    const prefix = uniquePrefix();
    const deployment = policyDeployment(urlWithPrefix(prefix));
    before(() => deployment.start());
    after(async () => {
      await deployment.stop();
      await deletePrefix(prefix);
    });
    registerPolicyScenarios(() => deployment.harness);
    registerPermitScenarios(() => deployment.harness);
  });
}
