import { after, before, describe } from 'node:test';
import { policyDeployment } from '../helpers/policy-deployment.js';
import { registerPermitScenarios } from '../helpers/permit-scenarios.js';
import { registerPolicyScenarios } from '../helpers/run-policy-scenarios.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('run policy on postgres + graphile-worker')) {
  describe('run policy across processes on PostgreSQL + graphile-worker (kill -9)', () => {
    const schema = uniqueSchema();
    const deployment = policyDeployment(urlWithSchema(schema));
    before(() => deployment.start());
    after(async () => {
      await deployment.stop();
      await dropSchema(schema);
    });
    registerPolicyScenarios(() => deployment.harness);
    registerPermitScenarios(() => deployment.harness);
  });
}
