import { after, before, describe } from 'node:test';
import { registerPermitScenarios } from '../helpers/permit-scenarios.js';
import { policyDeployment, type PolicyDeployment } from '../helpers/policy-deployment.js';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { uniquePrefix } from './redis-env.js';

/**
 * The permit scenarios of the single Redis (run-policy.test.ts) on a 3-master Redis Cluster this
 * file starts: a key's holders and waiters sit in the key's slot, the holders' tasks elsewhere.
 */
if (!skipWithoutRedisServer('concurrency permits on a redis cluster')) {
  describe('concurrency keys across processes on a Redis Cluster + BullMQ (kill -9)', () => {
    let cluster: LocalCluster | undefined;
    let deployment: PolicyDeployment | undefined;
    before(async () => {
      cluster = await startCluster(3, 0);
      deployment = policyDeployment(`${cluster.url}&prefix=${uniquePrefix()}`);
      await deployment.start();
    });
    after(async () => {
      await deployment?.stop();
      await cluster?.stop();
    });
    registerPermitScenarios(() => (deployment as PolicyDeployment).harness);
  });
}
