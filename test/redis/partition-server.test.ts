import { it } from 'node:test';
import { serverCutOff } from '../partitions/link-faults.js';
import { partitionSuite } from '../partitions/suite.js';

/** A `serve --no-worker` replica cut off from Redis by a TCP relay: reset, then blackholed. */
partitionSuite('redis', 'Redis partitions: a server cut off', (suite) => {
  it('answers the retryable error, never a tool result, and serves again after the heal', () =>
    serverCutOff(suite.kit, ['reset', 'blackhole']));
});
