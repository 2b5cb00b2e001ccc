import { it } from 'node:test';
import { workerCutAtFinalWrite } from '../partitions/final-write-stall.js';
import { slowLink } from '../partitions/link-faults.js';
import { workerAloneCutOff } from '../partitions/worker-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/** A worker whose connections to PostgreSQL are reset or stall while it runs tasks, and a slow link. */
partitionSuite('postgres', 'PostgreSQL partitions: resets, a stall and a slow link', (suite) => {
  it('a worker alone whose connections are reset while busy: no retry: false tool twice', () =>
    workerAloneCutOff(suite.kit, 'reset'));

  it('a slow link: every write lands once', () => slowLink(suite.kit, 100));

  it('a link that stalls past the lease as handlers return: each runs once, its outcome kept', () =>
    workerCutAtFinalWrite(suite.kit, 'blackhole'));
});
