import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { workerAloneCutOff, workerCutOffBesideAnother } from '../partitions/worker-cut.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** A worker cut off from PostgreSQL by a TCP relay, alone and beside a second worker. */
if (!skipWithoutPostgres('PostgreSQL partitions: a worker cut off')) {
  describe('PostgreSQL partitions: a worker cut off', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    // The lost replies never come after the heal (as behind Toxiproxy): the pool's connections
    // stay taken, and later writes wait for one ("timeout exceeded when trying to connect").
    it('alone, blackholed while busy: no retry: false tool twice, one result, serves after', () =>
      workerAloneCutOff(kit, 'blackhole', { holedStreams: 'keep' }));

    it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
      workerCutOffBesideAnother(kit));
  });
}
