import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { serverCutOff } from '../partitions/link-faults.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** A `serve --no-worker` replica cut off from PostgreSQL by a TCP relay: reset, then blackholed. */
if (!skipWithoutPostgres('PostgreSQL partitions: a server cut off')) {
  describe('PostgreSQL partitions: a server cut off', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    it('answers the retryable error, never a tool result, and serves again after the heal', () =>
      serverCutOff(kit, ['reset', 'blackhole']));
  });
}
