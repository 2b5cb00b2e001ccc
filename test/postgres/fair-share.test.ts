import { after, before, describe } from 'node:test';
import { registerFairBacklogScenario } from '../helpers/fair-share-scenario.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('fair share on postgres + graphile-worker')) {
  describe('fair share on PostgreSQL + graphile-worker (real processes)', () => {
    const schema = uniqueSchema();
    const deployment = registerFairBacklogScenario(urlWithSchema(schema), 1);
    before(() => deployment.start());
    after(async () => {
      await deployment.stop();
      await dropSchema(schema);
    });
  });
}
