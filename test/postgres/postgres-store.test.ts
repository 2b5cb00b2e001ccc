import { openPostgresStore } from '../../src/stores/postgres/index.js';
import { taskStoreContract } from '../../src/testing/index.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('postgres TaskStore contract')) {
  taskStoreContract('postgres', async ({ clock }) => {
    const schema = uniqueSchema();
    const url = urlWithSchema(schema);
    return {
      store: await openPostgresStore(url, { clock }),
      reopen: () => openPostgresStore(url, { clock }),
      cleanup: () => dropSchema(schema),
    };
  });
}
