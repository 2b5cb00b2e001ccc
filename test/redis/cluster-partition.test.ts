import { after, before, describe, it } from 'node:test';
import {
  skipWithoutRedisServer,
  startCluster,
  type LocalCluster,
} from '../helpers/redis-cluster.js';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { slowLink } from '../partitions/link-faults.js';
import { clusterUnderTest } from '../partitions/stores.js';
import { workerCutOffBesideAnother } from '../partitions/worker-cut.js';

/**
 * A worker cut off from a whole Redis Cluster (3 masters, a replica each) by a relay per node,
 * beside a second worker; and a worker on a slow link to every node.
 */
if (!skipWithoutRedisServer('Redis Cluster partitions')) {
  describe('Redis Cluster partitions: a worker cut off', () => {
    let cluster: LocalCluster;
    let kit: PartitionKit;
    before(async () => {
      cluster = await startCluster(3, 1);
      kit = await partitionKit(clusterUnderTest(cluster));
    });
    after(async () => {
      await kit?.close();
      await cluster?.stop();
    });

    it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
      workerCutOffBesideAnother(kit));

    it('a slow link to every node: every write lands once', () => slowLink(kit, 50));
  });
}
