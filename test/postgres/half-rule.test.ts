import { after, before, describe } from 'node:test';
import { registerHalfRuleScenario } from '../helpers/half-rule-scenario.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('the more-than-half rule on postgres + graphile-worker')) {
  describe('the more-than-half rule across two graphile workers (real processes)', () => {
    const schema = uniqueSchema();
    const deployment = registerHalfRuleScenario(urlWithSchema(schema));
    before(() => deployment.start());
    after(async () => {
      await deployment.stop();
      await dropSchema(schema);
    });
  });
}
