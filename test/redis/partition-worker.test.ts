import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { redisUnderTest } from '../partitions/stores.js';
import { workerAloneCutOff, workerCutOffBesideAnother } from '../partitions/worker-cut.js';
import { skipWithoutRedis } from './redis-env.js';

/** A worker cut off from Redis by a TCP relay, alone and beside a second worker. */
if (!skipWithoutRedis('Redis partitions: a worker cut off')) {
  describe('Redis partitions: a worker cut off', () => {
    const store = redisUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    it('alone, blackholed while busy: no retry: false tool twice, one result, serves after', () =>
      workerAloneCutOff(kit, 'blackhole'));

    it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
      workerCutOffBesideAnother(kit));
  });
}
