import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { serverCutOff } from '../partitions/link-faults.js';
import { redisUnderTest } from '../partitions/stores.js';
import { skipWithoutRedis } from './redis-env.js';

/** A `serve --no-worker` replica cut off from Redis by a TCP relay: reset, then blackholed. */
if (!skipWithoutRedis('Redis partitions: a server cut off')) {
  describe('Redis partitions: a server cut off', () => {
    const store = redisUnderTest();
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
