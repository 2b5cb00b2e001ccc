import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { describeTaskResources } from '../server/task-resources-frame.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('task resources on PostgreSQL')) {
  describeTaskResources('PostgreSQL', async () => {
    const schema = uniqueSchema();
    const store = await openPostgresStore(urlWithSchema(schema));
    return {
      store,
      async dispose() {
        await store.close();
        await dropSchema(schema);
      },
    };
  });
}
