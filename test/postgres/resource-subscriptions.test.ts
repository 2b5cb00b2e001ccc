import { describe } from 'node:test';
import { resourceServers } from '../helpers/resource-processes.js';
import { crossReplicaSubscriptionCases } from '../listen/resource-listen.js';
import { dropSchema, skipWithoutPostgres, uniqueSchema, urlWithSchema } from './postgres-env.js';

/**
 * Two `taskrail serve` processes on one PostgreSQL: the task runs on one (the other has
 * `--no-worker`), and a caller following its output on the other is told as it grows.
 */
if (!skipWithoutPostgres('resource subscriptions across PostgreSQL replicas')) {
  describe('resource subscriptions across replicas (PostgreSQL, serve processes)', () => {
    crossReplicaSubscriptionCases(async () => {
      const schema = uniqueSchema();
      const servers = resourceServers(urlWithSchema(schema));
      const writer = await servers.serve();
      const reader = await servers.serve({ noWorker: true });
      return {
        writer: writer.url,
        reader: reader.url,
        release: (name) => servers.release(name),
        async close() {
          await servers.close();
          await dropSchema(schema);
        },
      };
    });
  });
}
