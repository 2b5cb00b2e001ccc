import { it } from 'node:test';
import { workerAloneCutOff, workerCutOffBesideAnother } from '../partitions/worker-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/** A worker cut off from Redis by a TCP relay, alone and beside a second worker. */
partitionSuite('redis', 'Redis partitions: a worker cut off', (suite) => {
  it('alone, blackholed while busy: no retry: false tool twice, one result, serves after', () =>
    workerAloneCutOff(suite.kit, 'blackhole'));

  it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
    workerCutOffBesideAnother(suite.kit));
});
