import { describeResourcesAfterKill } from '../helpers/resource-processes.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

if (!skipWithoutPostgres('task resources after kill -9 (PostgreSQL)')) {
  const schema = uniqueSchema();
  describeResourcesAfterKill('PostgreSQL', () => ({
    url: urlWithSchema(schema),
    dispose: () => dropSchema(schema),
  }));
}
