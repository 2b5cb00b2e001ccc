import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { stopWhileCutOff } from '../partitions/stop-cut.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** `taskrail serve` stopped with SIGTERM while its link to PostgreSQL is blackholed. */
if (!skipWithoutPostgres('PostgreSQL partitions: a server stopped while cut off')) {
  describe('PostgreSQL partitions: a server stopped while cut off', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    it('serve --no-worker exits within the stop bound', () => stopWhileCutOff(kit, false));

    it('serve running a task exits within the stop bound', () => stopWhileCutOff(kit, true));
  });
}
