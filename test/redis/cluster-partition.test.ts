import { it } from 'node:test';
import { slowLink } from '../partitions/link-faults.js';
import { workerCutOffBesideAnother } from '../partitions/worker-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/**
 * A worker cut off from a whole Redis Cluster (3 masters, a replica each) by a relay per node,
 * beside a second worker; and a worker on a slow link to every node.
 */
partitionSuite('redis-cluster', 'Redis Cluster partitions: a worker cut off', (suite) => {
  it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
    workerCutOffBesideAnother(suite.kit));

  it('a slow link to every node: every write lands once', () => slowLink(suite.kit, 50));
});
