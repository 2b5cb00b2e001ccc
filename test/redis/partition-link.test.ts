import { it } from 'node:test';
import { slowLink } from '../partitions/link-faults.js';
import { workerAloneCutOff } from '../partitions/worker-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/** A worker whose connections to Redis are reset while it runs tasks, and a slow link. */
partitionSuite('redis', 'Redis partitions: resets and a slow link', (suite) => {
  it('a worker alone whose connections are reset while busy: no retry: false tool twice', () =>
    workerAloneCutOff(suite.kit, 'reset'));

  it('a slow link: every write lands once', () => slowLink(suite.kit, 100));
});
