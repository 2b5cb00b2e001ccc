import { it } from 'node:test';
import { workerAloneCutOff, workerCutOffBesideAnother } from '../partitions/worker-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/** A worker cut off from PostgreSQL by a TCP relay, alone and beside a second worker. */
partitionSuite('postgres', 'PostgreSQL partitions: a worker cut off', (suite) => {
  // The lost replies never come after the heal (as behind Toxiproxy): the pool's connections
  // stay taken, and later writes wait for one ("timeout exceeded when trying to connect").
  it('alone, blackholed while busy: no retry: false tool twice, one result, serves after', () =>
    workerAloneCutOff(suite.kit, 'blackhole', { holedStreams: 'keep' }));

  it('beside a second worker: the cut-off run stops before the takeover, its late outcome is not stored', () =>
    workerCutOffBesideAnother(suite.kit));
});
