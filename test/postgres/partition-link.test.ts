import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { slowLink } from '../partitions/link-faults.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { workerAloneCutOff } from '../partitions/worker-cut.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** A worker whose connections to PostgreSQL are reset while it runs tasks, and a slow link. */
if (!skipWithoutPostgres('PostgreSQL partitions: resets and a slow link')) {
  describe('PostgreSQL partitions: resets and a slow link', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    it('a worker alone whose connections are reset while busy: no retry: false tool twice', () =>
      workerAloneCutOff(kit, 'reset'));

    it('a slow link: every write lands once', () => slowLink(kit, 100));
  });
}
