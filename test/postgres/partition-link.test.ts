import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { serverCutOff, slowLink } from '../partitions/link-faults.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { workerAloneCutOff } from '../partitions/worker-cut.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** A server cut off from PostgreSQL, a worker whose connections are reset, and a slow link. */
if (!skipWithoutPostgres('PostgreSQL partitions: server cut off, resets, slow link')) {
  describe('PostgreSQL partitions: server cut off, resets, slow link', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    it('a server cut off answers the retryable error, never a tool result', () =>
      serverCutOff(kit, ['reset', 'blackhole']));

    it('a worker alone whose connections are reset while busy: no retry: false tool twice', () =>
      workerAloneCutOff(kit, 'reset'));

    it('a slow link: every write lands once', () => slowLink(kit, 100));
  });
}
